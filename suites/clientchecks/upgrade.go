package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// The recognized errors of 2026-07-28 a server of that revision alone
// answers a request of 2025-11-25 with: the version is not supported, or
// (the compatibility matrix's "rejected per server validation") the
// request lacks the headers and _meta of 2026-07-28.
const (
	codeUnsupportedVersion = -32022
	codeHeaderMismatch     = -32020
)

// refusalText names a refusal in a message.
func refusalText(code int) string {
	if code == codeHeaderMismatch {
		return "400 and -32020 (HeaderMismatch)"
	}
	return fmt.Sprintf("400 and -32022 (supported: %s)", eraModern)
}

// modernRefusal is the body of a 2026-07-28 server's refusal of the older
// request x.
func modernRefusal(x *exchange, code int) []byte {
	id := x.RPC.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code}
	switch {
	case code == codeHeaderMismatch && x.ProtocolVersion == "":
		e["message"] = "Header mismatch: required header MCP-Protocol-Version is missing"
	case code == codeHeaderMismatch:
		e["message"] = fmt.Sprintf("Header mismatch: MCP-Protocol-Version header value %q does not match the body, whose _meta names no protocol version", x.ProtocolVersion)
	default:
		e["message"] = fmt.Sprintf("Unsupported protocol version %q", x.ProtocolVersion)
		e["data"] = map[string]any{"supported": []string{eraModern}, "requested": x.ProtocolVersion}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return body
}

// freshState gives the runs from now on a new, empty state directory: the
// client as installed anew, with nothing cached.
func (e *clientEnv) freshState() {
	dir, err := os.MkdirTemp(e.client.StateRoot, strings.ToLower(e.Entry.ID)+"-")
	if err != nil {
		e.Failf("state directory: %v", err)
	}
	e.Cleanup(func(context.Context) { os.RemoveAll(dir) })
	e.Logf("a new state directory %s from now on", dir)
	e.stateDir = dir
}

// restartAtNextCall makes the server restart as a 2026-07-28 server
// alone at the next tools/call.
func (e *clientEnv) restartAtNextCall() {
	var armed atomic.Bool
	e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
		if armed.CompareAndSwap(false, true) {
			e.srv.restartAs(x, eraModern)
		}
		return false
	})
}

// fallBackThenRestart runs the client on a server of 2025-11-25 (run a,
// which must fall back to it, or the check does not apply: so nothing is
// left to grade), then restarts the server as 2026-07-28 alone at the
// client's next call (run b). refused is b's request refused for its
// revision, if any.
func (e *clientEnv) fallBackThenRestart(ctx context.Context, so string) (a, b *clientRun, refused *exchange) {
	e.srv.setEra(eraLegacy)
	a = e.start(callRun("echo", map[string]any{"text": "one"}))
	if why := e.fellBack(ctx, a); why != "" {
		e.Skipf(report.NotApplicable, "not applicable: %s, so %s (CLI-DOWNGRADE grades the fallback)%s", why, so, a.clientError())
	}
	e.restartAtNextCall()
	b = e.start(callRun("echo", map[string]any{"text": "two"}))
	b.wait(ctx)
	b.declined()
	return a, b, e.refusedIn(b.n, eraModern)
}

// upgrade is one pair of CLI-UPGRADE's runs: the client falls back to
// 2025-11-25, then the server restarts as 2026-07-28 alone and refuses its
// next call with code; the client must move to 2026-07-28.
func (e *clientEnv) upgrade(ctx context.Context, code int) {
	e.srv.setRefusal(code)
	_, b, refused := e.fallBackThenRestart(ctx, "there is nothing to upgrade from")
	if refused == nil {
		e.Skipf(report.NotApplicable, "not applicable: run %d's call was not refused for its revision (it spoke %s already), so no upgrade was needed%s", b.n, eraModern, b.clientError())
	}
	how := refusalText(code)
	xs := e.exchanges(b.n)
	probe := firstAfter(xs, refused.N, exchange.isModern)
	e.Expect(probe).NotTo(BeNil(), "after #%d was refused with %s, the client sent no request of %s: a recognized error of %s identifies a server of that revision, so it must retry in it, not fall back%s", refused.N, how, eraModern, eraModern, b.clientError())
	discovered := firstAfter(xs, refused.N, func(x exchange) bool { return x.RPC.Method == "server/discover" })
	e.Expect(discovered).NotTo(BeNil(), "after #%d was refused with %s the client did not ask server/discover again: the revision it had cached failed, so it must probe again", refused.N, how)
	var calls []exchange
	for _, x := range xs {
		if x.N <= refused.N {
			continue
		}
		if x.N > probe.N {
			e.Expect(x.SessionID).To(BeEmpty(), "#%d presented session %s to a server that has no sessions any more", x.N, x.SessionID)
			e.Expect(x.isInit()).To(BeFalse(), "#%d: initialize after the server said it speaks %s only", x.N, eraModern)
		}
		if x.RPC.Method == "tools/call" {
			calls = append(calls, x)
		}
	}
	e.expectCount(calls, 1, "the interrupted call must be sent once more, in %s; tools/call after the refusal with %s", eraModern, how)
	e.Expect(calls[0].isModern()).To(BeTrue(), "#%d: the call sent again named protocol version %q", calls[0].N, calls[0].ProtocolVersion)
	if b.code != 0 {
		b.finish(ctx, fmt.Sprintf("the call refused with %s must succeed in %s", how, eraModern))
	}
	e.Expect(resultText(b.result().Result)).To(Equal("two"), "the interrupted call's result")
}

// revisionCache is CLI-REVISION-CACHE: the revision the client found is
// kept across its restarts, the fallback to 2025-11-25 and, once that
// fails, the upgrade to 2026-07-28.
func (e *clientEnv) revisionCache(ctx context.Context) {
	a, b, refused := e.fallBackThenRestart(ctx, "there is no revision to remember")
	for _, x := range e.exchanges(b.n) {
		if refused != nil && x.N >= refused.N {
			break
		}
		e.Expect(x.isModern()).To(BeFalse(), "#%d: the restarted client probed for %s again (%s %s, MCP-Protocol-Version %q), though run %d found the server speaks %s; the state directory should remember it",
			x.N, eraModern, x.Method, x.RPC.Method, x.ProtocolVersion, a.n, eraLegacy)
	}
	if refused == nil {
		b.finish(ctx, "the call must succeed")
		e.Failf("run %d sent no tools/call for the server to refuse: it must call the tool", b.n)
	}
	if b.code != 0 || firstAfter(e.exchanges(b.n), refused.N, exchange.isModern) == nil {
		e.Logf("run %d did not move to %s after #%d was refused (CLI-UPGRADE grades that): whether the upgrade is remembered is not graded", b.n, eraModern, refused.N)
		return
	}
	c := e.run(ctx, callRun("echo", map[string]any{"text": "three"}))
	for _, x := range e.exchanges(c.n) {
		e.Expect(x.isInit() || !x.isModern()).To(BeFalse(), "#%d: the restarted client spoke %s again (%s %s, MCP-Protocol-Version %q), though run %d found the server speaks %s only; the state directory should remember the upgrade (re-probing is for when the cached revision fails)",
			x.N, eraLegacy, x.Method, x.RPC.Method, x.ProtocolVersion, b.n, eraModern)
	}
	e.Expect(resultText(c.result().Result)).To(Equal("three"), "the call's result")
}
