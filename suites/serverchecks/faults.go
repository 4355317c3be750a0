package serverchecks

import (
	"time"

	"github.com/mcp-conform/mcp-conform/faults"
)

// needProxy skips a check that injects faults when there is no proxy.
func (e *env) needProxy() *faults.Proxy {
	if e.proxy == nil {
		e.Skip("injects a network fault: needs the fault proxy (run without --no-proxy)")
	}
	return e.proxy
}

// refresh cuts every live connection of the check at once (F-REFRESH).
func (e *env) refresh() {
	p := e.needProxy()
	e.Logf("!! F-REFRESH: every live connection cut")
	if err := p.Refresh(); err != nil {
		e.Failf("F-REFRESH: %v", err)
	}
	e.tr.CloseIdleConnections()
}

// freeze makes every live connection half-open (F-BLACKHOLE).
func (e *env) freeze() {
	p := e.needProxy()
	e.Logf("!! F-BLACKHOLE: live connections frozen, not closed")
	if err := p.Freeze(); err != nil {
		e.Failf("F-BLACKHOLE: %v", err)
	}
	e.tr.CloseIdleConnections()
}

// cutAfter arms F-CUT-AFTER: the next stream to carry n events is cut.
func (e *env) cutAfter(n int) {
	p := e.needProxy()
	e.Logf("!! F-CUT-AFTER: the next stream to carry %d events will be cut", n)
	if err := p.CutAfter(n); err != nil {
		e.Failf("F-CUT-AFTER: %v", err)
	}
}

// reset resets every live connection of the check (F-RESET).
func (e *env) reset() {
	p := e.needProxy()
	e.Logf("!! F-RESET: every live connection reset (RST)")
	if err := p.Reset(); err != nil {
		e.Failf("F-RESET: %v", err)
	}
	e.tr.CloseIdleConnections()
}

// slowLink makes the server's data arrive late and in small pieces (F-LATENCY).
func (e *env) slowLink() {
	p := e.needProxy()
	e.Logf("!! F-LATENCY: 20ms latency, data sliced into ~8-byte pieces")
	if err := p.Latency(20*time.Millisecond, 5*time.Millisecond); err != nil {
		e.Failf("F-LATENCY: %v", err)
	}
	if err := p.Slicer(8, 6, time.Millisecond); err != nil {
		e.Failf("F-LATENCY: %v", err)
	}
}

// stall makes every live connection of the check stop reading what the
// server sends (F-STALL): a client that stopped reading those streams.
func (e *env) stall() {
	p := e.needProxy()
	e.Logf("!! F-STALL: live connections stop reading what the server sends")
	if err := p.Stall(); err != nil {
		e.Failf("F-STALL: %v", err)
	}
	e.tr.CloseIdleConnections()
}
