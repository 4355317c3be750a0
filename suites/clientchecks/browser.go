package clientchecks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
)

// The browser checks' call: browserSteps steps, browserInterval apart.
const (
	browserSteps    = 6
	browserInterval = 400 * time.Millisecond
	// CLI-BROWSER-OFFLINE keeps the tab offline for offlineFor, and on
	// until a request of the page fails for it, up to offlineMax.
	offlineFor = 1500 * time.Millisecond
	offlineMax = 6 * time.Second
)

// browserChecks grade what only a web page in a browser has: the
// browser's own reload, its network going away, a second tab. A client
// that is a process is not applicable to them.
func browserChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-BROWSER-RELOAD", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "browser-refresh",
			Summary: "The seeds' acceptance test: a page reloaded by the browser while a call runs rejoins its stored session (no new session while it lives) and shows the call's result."},
			opts: serverOpts{}, runs: 2, waits: browserSteps * browserInterval, body: func(ctx context.Context, e *clientEnv) {
				e.needsPage()
				a, sid := e.callInFlight(ctx, browserSteps, "l2")
				b := e.reload(a, actionRun(contract.ActionResume))
				b.finish(ctx, "the page reloaded during a call must rejoin its session and show the call's result")
				e.Expect(resultText(b.result().Result)).To(Equal(fmt.Sprintf("completed %d steps", browserSteps)), "the call's result after the reload")
				e.expectRejoined(b, sid)
			}},

		{Entry: catalogue.Entry{ID: "CLI-BROWSER-OFFLINE", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "browser-refresh",
			Summary: "A page whose network goes away during a call (its call's stream lost, its requests failing) and comes back resumes the call's stream in its session with Last-Event-ID once online, and shows the call's result, without a new session."},
			opts: serverOpts{}, runs: 1, waits: browserSteps*browserInterval + offlineMax, body: func(ctx context.Context, e *clientEnv) {
				e.needsPage()
				var offline atomic.Bool
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					if x.tool() == "long_operation" {
						// The network goes: the call's stream is lost at its
						// next event once the tab is offline, with no retry
						// field, as a dropped connection has none.
						e.srv.cutWhen(w, func(sseEvent) bool { return offline.Load() }, 0)
					}
					return false
				})
				a, sid := e.callInFlight(ctx, browserSteps, "l2")
				tried := e.offlineUntilFailure(a, offlineFor, offlineMax, func() { offline.Store(true) })
				online := time.Now()
				if !tried {
					e.Logf("the page sent no request while offline (%v): it waited for the network to come back", offlineMax)
				}
				a.finish(ctx, "a call whose network came back must complete")
				e.Expect(resultText(a.result().Result)).To(Equal(fmt.Sprintf("completed %d steps", browserSteps)), "the call's result")
				callX := e.toolCalls(a.n)[0]
				if callX.CutAt.IsZero() {
					e.Failf("the call's stream was not lost while offline: the call ended before its next event (%s)", e.sentAccount(a.n))
				}
				sent := eventIDs(callX)
				resumed := false
				for _, x := range e.exchanges(a.n) {
					switch {
					case x.RPC.Method == "initialize" && x.SessionID == "":
						e.Expect(x.At.Before(online)).To(BeTrue(), "#%d: back online, the page started a new session (initialize without Mcp-Session-Id) though its session %s lived", x.N, sid)
					case x.Method == http.MethodGet && slices.Contains(sent, x.LastEventID):
						resumed = true
					}
				}
				e.Expect(resumed).To(BeTrue(), "back online, the page never resumed the call's lost stream with Last-Event-ID (one of %q): %s", sent, e.getAccount())
			}},

		{Entry: catalogue.Entry{ID: "CLI-BROWSER-SECOND-TAB", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "browser-refresh",
			Summary: "A second tab of the page, opened on the same storage while the first tab's call runs, neither ends nor takes over the first tab's session: its call completes, the first tab's goes on, no DELETE and no initialize presents the first tab's session meanwhile, and that session's GET stream is not taken from it again and again."},
			opts: serverOpts{}, runs: 2, waits: firstTabSteps * browserInterval, body: func(ctx context.Context, e *clientEnv) {
				e.needsPage()
				// The first tab's call outlasts the second tab's whole run,
				// however slowly that page loads: the check ends it.
				a, sid := e.callInFlight(ctx, firstTabSteps, "l1")
				e.Logf("!! F-SECOND-TAB: a second tab opens the page, on the same storage, while run %d's call runs in session %s", a.n, sid)
				// Its call outlasts a retry field or two of the first tab's
				// streams, so two tabs taking one stream would show.
				b := e.start(browserCall(secondTabSteps))
				b.finish(ctx, "the second tab's call must complete")
				e.Expect(resultText(b.result().Result)).To(Equal(fmt.Sprintf("completed %d steps", secondTabSteps)), "the second tab's result")
				if a.exitedNow() {
					e.Failf("the first tab's run ended (%s) while the second tab ran, before its call of %d steps could complete%s", a.exitText(), firstTabSteps, a.clientError())
				}
				a.end("the second tab is done; the first tab's call was still running")
				gets := 0
				for _, x := range e.exchanges(0) {
					if x.SessionID != sid || x.At.Before(b.started) || x.At.After(b.ended) {
						continue
					}
					switch {
					case x.Method == http.MethodDelete:
						e.Failf("#%d: DELETE of session %s while the first tab's call ran in it: the second tab ended the first tab's session", x.N, sid)
					case x.RPC.Method == "initialize":
						e.Failf("#%d: initialize presenting session %s while the first tab's call ran in it: a re-initialize recreates the session's transport, cutting the first tab's streams", x.N, sid)
					case x.Method == http.MethodGet:
						gets++
					}
				}
				// While both tabs ran: the first tab's GET stream and one
				// reconnect. More is two tabs taking one session's stream
				// from each other.
				e.Expect(gets).To(BeNumerically("<=", 2), "GET requests presenting the first tab's session %s while the second tab ran (of the check: %s): two tabs are taking its stream from each other; each tab must own the session it uses (a lock, or a session of its own for the second tab)", sid, e.getAccount())
			}},
	}
}

// browserCall is a run that calls long_operation for steps steps,
// browserInterval apart.
func browserCall(steps int) contract.Run {
	return callRun("long_operation", map[string]any{"steps": steps, "interval_ms": browserInterval.Milliseconds()})
}

// callInFlight starts a run of browserCall(steps) and returns it once the
// server has sent step of it (and the page had half a step to handle it),
// with the session the call runs in.
func (e *clientEnv) callInFlight(ctx context.Context, steps int, step string) (*clientRun, string) {
	e.Helper()
	a := e.start(browserCall(steps))
	e.betweenSteps(ctx, a, step, browserInterval/2)
	return a, e.sessionOf(a.n)
}

// CLI-BROWSER-SECOND-TAB's calls: the first tab's, which the check ends
// once the second tab's is done, and the second tab's.
const (
	firstTabSteps  = 30
	secondTabSteps = 4
)

// expectRejoined checks that run cr went on in session sid: it presented
// it, and made no session of its own (an initialize without a session id)
// while sid lived.
func (e *clientEnv) expectRejoined(cr *clientRun, sid string) {
	e.Helper()
	presented := false
	for _, x := range e.exchanges(cr.n) {
		presented = presented || x.SessionID == sid
		if x.RPC.Method == "initialize" && x.SessionID == "" {
			e.Failf("#%d: after the reload the page started a new session (initialize without Mcp-Session-Id) though its session %s lived: the page must keep the session id in its storage and rejoin it", x.N, sid)
		}
	}
	e.Expect(presented).To(BeTrue(), "run %d never presented the stored session %s", cr.n, sid)
}

// getAccount lists the check's GET requests, for messages.
func (e *clientEnv) getAccount() string {
	var out []string
	for _, x := range e.exchanges(0) {
		if x.Method == http.MethodGet {
			out = append(out, fmt.Sprintf("#%d %s (status %d)", x.N, x.stream(), x.Status))
		}
	}
	return strings.Join(out, "; ")
}
