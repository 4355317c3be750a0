package serverchecks

import (
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// needProxy skips a check that injects faults when there is no proxy.
func (e *env) needProxy() *toxics.Proxy {
	if e.proxy == nil {
		e.Skip(report.NeedsProxy, "injects a network fault: needs the fault proxy (run without --no-proxy)")
	}
	return e.proxy
}

// inject logs fault id (what it does), applies it through the check's
// proxy and, when it hits live connections, drops the idle ones so the
// next request opens a fresh connection.
func (e *env) inject(id, what string, live bool, apply ...func(*toxics.Proxy) error) {
	p := e.needProxy()
	e.Logf("!! %s: %s", id, what)
	for _, f := range apply {
		if err := f(p); err != nil {
			e.Failf("%s: %v", id, err)
		}
	}
	if live {
		e.tr.CloseIdleConnections()
	}
}

// refresh cuts every live connection of the check at once (F-REFRESH).
func (e *env) refresh() {
	e.inject("F-REFRESH", "every live connection cut", true, (*toxics.Proxy).Refresh)
}

// freeze makes every live connection half-open (F-BLACKHOLE).
func (e *env) freeze() {
	e.inject("F-BLACKHOLE", "live connections frozen, not closed", true, (*toxics.Proxy).Freeze)
}

// cutAfter arms F-CUT-AFTER: the next stream to carry n events is cut.
// The arming is a note; the fault goes on the timeline when the proxy
// really cuts, which is what a reader of the timeline looks for.
func (e *env) cutAfter(n int) {
	p := e.needProxy()
	e.Logf("F-CUT-AFTER armed: the next stream to carry %d events will be cut", n)
	cut := func() { e.Logf("!! F-CUT-AFTER: stream cut after %d events", n) }
	if err := p.CutAfterFunc(n, cut); err != nil {
		e.Failf("F-CUT-AFTER: %v", err)
	}
}

// reset resets every live connection of the check (F-RESET).
func (e *env) reset() {
	e.inject("F-RESET", "every live connection reset (RST)", true, (*toxics.Proxy).Reset)
}

// slowLink makes the server's data arrive late and in small pieces (F-LATENCY).
//
// Pieces of ~64 bytes still split every message across reads. Pieces of
// ~8 bytes, one a millisecond, carried less than 8 KB/s: less than a server
// that copies every response to the GET stream sends there while the
// harness keeps the session warm, so on a loaded machine the copy of the
// call's response could still be queued in the proxy when the check ended.
func (e *env) slowLink() {
	e.inject("F-LATENCY", "20ms latency, data sliced into ~64-byte pieces", false,
		func(p *toxics.Proxy) error { return p.Latency(20*time.Millisecond, 5*time.Millisecond) },
		func(p *toxics.Proxy) error { return p.Slicer(64, 48, time.Millisecond) })
}

// stall makes every live connection of the check stop reading what the
// server sends (F-STALL): a client that stopped reading those streams.
func (e *env) stall() {
	e.inject("F-STALL", "live connections stop reading what the server sends", true, (*toxics.Proxy).Stall)
}
