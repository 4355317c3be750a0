// Package toxics injects network faults between an MCP client and the
// server under test, on an embedded in-process Toxiproxy v2. Each check puts
// its own Proxy in front of the server and dials Proxy.Addr.
//
// Fault IDs (see docs/faults.md) and what simulates them:
//
//	F-REFRESH    Proxy.Refresh: every open connection closed at once
//	F-RESET      Proxy.Reset (proxy created WithReset): every open connection reset
//	F-CUT-AFTER  Proxy.CutAfter: a stream closed right after its n-th SSE event
//	             (Proxy.CutAfterFunc also reports the moment of the cut)
//	F-BLACKHOLE  Proxy.Freeze: open connections go silent without a close;
//	             Proxy.Timeout: Toxiproxy's timeout toxic, new connections too
//	F-STALL      Proxy.Stall: open connections stop reading what the server
//	             sends (a client that stops reading), so its writes block
//	F-IDLE       Proxy.Timeout (the middlebox side; the client side is waiting)
//	F-LATENCY    Proxy.Latency, Proxy.Slicer, Proxy.Bandwidth
//
// Reset needs a proxy created WithReset, whose every close is a reset; see
// WithReset.
//
// F-RESTART is not a network fault; the harness restarts the server process.
//
// Refresh, Freeze, Stall, CutAfter and Reset act through a switch toxic that
// every proxy carries in both directions from the start. Each connection takes a
// generation when it opens, and a fault affects only connections older than
// it, so connections opened after a fault work normally. A connection opens,
// in this sense, when Toxiproxy has accepted it and dialled the upstream:
// any connection that has carried data is open, but one whose TCP handshake
// completed just before a fault, not yet accepted by Toxiproxy, counts as
// opened after it.
//
// Latency, Slicer, Bandwidth and Timeout add Toxiproxy's built-in toxics,
// which hit open and future connections alike and stay until the proxy is
// closed: toxics are never removed one by one, because Toxiproxy's
// RemoveToxic can hang (Shopify/toxiproxy#558); close the proxy instead.
package toxics
