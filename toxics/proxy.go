package toxics

import (
	"errors"
	"fmt"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// Proxy is one Toxiproxy proxy between a client and the server under test.
// Its methods are safe for concurrent use, also while traffic flows.
type Proxy struct {
	name     string
	addr     string
	upstream string
	reset    bool
	srv      *Server
	tp       *toxiproxy.Proxy
	ctl      *control

	mu       sync.Mutex
	closed   bool
	toxicSeq int
}

// Addr is the "127.0.0.1:PORT" address clients dial instead of the upstream.
func (p *Proxy) Addr() string { return p.addr }

// Name is the proxy's unique Toxiproxy name, for logs and reports.
func (p *Proxy) Name() string { return p.name }

// Upstream is the "host:port" every connection is forwarded to.
func (p *Proxy) Upstream() string { return p.upstream }

// Close removes the whole proxy: its listener stops and every connection
// through it is closed. Toxics are never removed one by one, because
// Toxiproxy's RemoveToxic can hang when a client has gone
// (Shopify/toxiproxy#558). Close is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.ctl.release()
	_ = p.srv.api.Collection.Remove(p.name) // only fails if already removed
	unregisterControl(p.name)
	p.srv.forget(p)
}

// Refresh simulates F-REFRESH: every connection open now is closed at once,
// and both the client and the server see the close (a FIN, or a reset on a
// WithReset proxy). Connections opened afterwards work normally. It returns
// once the close is under way; the peers see it moments later.
func (p *Proxy) Refresh() error {
	return p.fault("refresh", p.ctl.kill)
}

// Freeze simulates F-BLACKHOLE on the connections open now: they stop
// forwarding data in both directions and are not closed (no FIN, no reset),
// like a half-open connection behind a middlebox that drops everything.
// Data either peer writes after Freeze returns is never delivered; the
// proxy stops reading it, so the writer's buffers fill. A Refresh or Reset
// still closes frozen connections; Close ends them. Connections opened
// afterwards work normally.
func (p *Proxy) Freeze() error {
	return p.fault("freeze", p.ctl.freeze)
}

// Stall simulates F-STALL on the connections open now: the client stops
// reading what the server sends, while the connection stays open and what
// the client sends still arrives. The proxy takes a few KB more (one read
// beyond 4 KB) of each such connection's server-to-client data (dropped, never delivered;
// see Stalled), then stops reading it, so the server's socket buffers fill
// and its writes block. A Refresh or Reset still closes stalled
// connections; Close ends them. Connections opened afterwards work
// normally.
func (p *Proxy) Stall() error {
	return p.fault("stall", p.ctl.stall)
}

// Stalled is the number of bytes the server wrote to stalled connections
// that the proxy took before it stopped reading them: a server writing to
// a stalled connection shows here first.
func (p *Proxy) Stalled() int64 { return p.ctl.stalledBytes() }

// CutAfter simulates F-CUT-AFTER: the first server-to-client connection that
// carries n more complete SSE events after this call is closed right after
// forwarding the n-th one. An event is a block ending in a blank line with
// at least one non-comment field, so keep-alive comments do not count; any
// line ending and any chunking are understood. Only plain HTTP/1.x is
// followed (not TLS, not HTTP/2). One shot: after the cut, or after a later
// CutAfter replaces this one, data passes again.
func (p *Proxy) CutAfter(n int) error { return p.CutAfterFunc(n, nil) }

// CutAfterFunc is CutAfter that also calls cut, if not nil, at the moment
// the proxy closes the stream: once, right after the n-th event went out,
// on the proxy's goroutine (so it must return quickly). A cut that never
// happens (replaced, or the proxy closed first) never calls it.
func (p *Proxy) CutAfterFunc(n int, cut func()) error {
	if n < 1 {
		return fmt.Errorf("toxics: cut after %d events: need at least 1", n)
	}
	return p.fault("cut after", func() { p.ctl.armCut(n, cut) })
}

// Reset simulates F-RESET: every connection open now is reset, so the
// client's next read fails with ECONNRESET, and so does the server's.
// Connections opened afterwards work normally. The proxy must have been
// created WithReset: only sockets armed when they opened can be reset.
func (p *Proxy) Reset() error {
	if !p.reset {
		return fmt.Errorf("toxics: reset on proxy %s: %w", p.name, ErrNoReset)
	}
	return p.fault("reset", p.ctl.kill)
}

// ErrNoReset is returned by Reset on a proxy created without WithReset.
var ErrNoReset = errors.New("proxy was not created WithReset")

// Latency simulates F-LATENCY: server-to-client data of every connection,
// open or future, is delayed by latency ± jitter (whole milliseconds).
// Like every built-in toxic it stays until the proxy is closed; calling it
// again adds another delay on top.
func (p *Proxy) Latency(latency, jitter time.Duration) error {
	ms, err := millis("latency", latency)
	if err != nil {
		return err
	}
	jms, err := millis("jitter", jitter)
	if err != nil {
		return err
	}
	return p.builtin("latency", map[string]any{"latency": ms, "jitter": jms})
}

// Slicer simulates F-LATENCY on the packet level: server-to-client data is
// split into pieces of averageSize ± sizeVariation bytes (sizeVariation
// below averageSize), each delayed by delay (whole microseconds), as real
// TCP delivers it. Data arrives intact.
func (p *Proxy) Slicer(averageSize, sizeVariation int, delay time.Duration) error {
	if averageSize < 1 || sizeVariation < 0 || sizeVariation >= averageSize {
		return fmt.Errorf("toxics: slicer: need 0 <= size variation (%d) < average size (%d)", sizeVariation, averageSize)
	}
	if delay < 0 {
		return fmt.Errorf("toxics: slicer: negative delay %v", delay)
	}
	return p.builtin("slicer", map[string]any{
		"average_size": averageSize, "size_variation": sizeVariation, "delay": delay.Microseconds(),
	})
}

// Bandwidth simulates a slow link (F-LATENCY): server-to-client data flows
// at most kbPerSec KB/s.
func (p *Proxy) Bandwidth(kbPerSec int64) error {
	if kbPerSec < 1 {
		return fmt.Errorf("toxics: bandwidth: rate %d KB/s must be at least 1", kbPerSec)
	}
	return p.builtin("bandwidth", map[string]any{"rate": kbPerSec})
}

// Timeout adds Toxiproxy's timeout toxic (F-IDLE, F-BLACKHOLE) on the
// server-to-client side of every connection, open or future: data stops
// and is dropped, and after d (whole milliseconds) the connection is
// closed; with d = 0 it is never closed. Unlike Freeze it also hits new
// connections, and it ends only with the proxy.
func (p *Proxy) Timeout(d time.Duration) error {
	ms, err := millis("timeout", d)
	if err != nil {
		return err
	}
	return p.builtin("timeout", map[string]any{"timeout": ms})
}

// fault raises one of the switch faults unless the proxy is closed.
func (p *Proxy) fault(what string, raise func()) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("toxics: %s on proxy %s: %w", what, p.name, ErrClosed)
	}
	raise()
	return nil
}

// builtin appends a Toxiproxy toxic, under a name of its own, to the
// server-to-client chain of every connection, open or future.
func (p *Proxy) builtin(typ string, attrs map[string]any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return fmt.Errorf("toxics: %s on proxy %s: %w", typ, p.name, ErrClosed)
	}
	p.toxicSeq++
	spec := toxicSpec{
		Name:       fmt.Sprintf("%s_%d", typ, p.toxicSeq),
		Type:       typ,
		Stream:     "downstream",
		Toxicity:   1,
		Attributes: attrs,
	}
	if _, err := addToxic(p.tp, spec); err != nil {
		return fmt.Errorf("toxics: proxy %s: %w", p.name, err)
	}
	tail := faultSpec(fmt.Sprintf("tail_%d", p.toxicSeq), p.name, "downstream", roleTail)
	if _, err := addToxic(p.tp, tail); err != nil {
		return fmt.Errorf("toxics: proxy %s: %w", p.name, err)
	}
	return nil
}

// millis converts d for toxics that count whole milliseconds.
func millis(what string, d time.Duration) (int64, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("toxics: negative %s %v", what, d)
	case d > 0 && d < time.Millisecond:
		return 0, fmt.Errorf("toxics: %s %v is below the 1ms resolution", what, d)
	}
	return d.Milliseconds(), nil
}
