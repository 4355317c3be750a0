package clientchecks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// A long call that is still running when the client is killed; its first
// notifications come after longStep.
const longStep = 100 * time.Millisecond

var longCall = callRun("long_operation", map[string]any{"steps": 100, "interval_ms": longStep.Milliseconds()})

// reconnectToken is the bearer token CLI-RECONNECT gives the client.
const reconnectToken = "conform-token"

// sessionChecks are the sessions checks.
func sessionChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-PERSIST", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-persistence",
			Summary: "Session id, server URL, last event id, last result and logs are in durable storage."},
			opts: serverOpts{}, runs: 3, waits: 2*20*time.Millisecond + 2*longStep + longStep/2, body: func(ctx context.Context, e *clientEnv) {
				a := e.run(ctx, callRun("long_operation", map[string]any{"steps": 2, "interval_ms": 20}))
				first := a.result()
				b := e.start(longCall)
				// The kill keys on what the server sent, not on what the
				// client printed.
				e.killBetweenSteps(ctx, b, "l2", longStep/2)
				sid := e.sessionOf(b.n)
				c := e.run(ctx, actionRun(contract.ActionShow))
				e.expectCount(e.exchanges(c.n), 0, "show must not contact the server; its requests")
				st := c.stored()
				e.Expect(st.SessionID).To(Equal(sid), "stored session id: the session of the killed run")
				e.Expect(st.ServerURL).To(Equal(e.srv.url), "stored server URL")
				e.Expect(resultText(st.LastResult)).To(Equal(resultText(first.Result)), "stored last result: the result of the last call that completed")
				var printed []string
				for _, l := range append(a.ofType(contract.LineNotification), b.ofType(contract.LineNotification)...) {
					if isLog(l) {
						printed = append(printed, logData(l.Params))
					}
				}
				var stored []string
				for _, p := range st.Logs {
					stored = append(stored, logData(p))
				}
				// Run 1's log messages came before its result on the same
				// stream: a client that printed the result had them.
				callA, callB := e.toolCalls(a.n)[0], e.toolCalls(b.n)[0]
				if sentA := logsOnly(sentSteps(callA)); len(printed) == 0 && len(sentA) > 0 {
					e.Failf("no log message reached the application, so no stored log can be one it got: the server sent run %d's call (#%d) the log messages %s before its result, which the client printed, and run %d's call (#%d) %s before the kill; the client printed no log line (show printed the stored logs %q)",
						a.n, callA.N, stepsList(sentA), b.n, callB.N, stepsList(logsOnly(sentSteps(callB))), stored)
				}
				e.Expect(isSubsequence(printed, stored)).To(BeTrue(), "stored logs %q must hold every log line printed, in order: %q", stored, printed)
				ids := eventIDs(callB)
				if !slices.Contains(ids, st.LastEventID) {
					msg := fmt.Sprintf("stored last event id %q is not an event of the killed call's stream: the server sent #%d the events %q before the kill", st.LastEventID, callB.N, ids)
					// A client that printed nothing of the killed call shows
					// no sign it had handled an event; on a loaded machine it
					// may not have.
					if st.LastEventID == "" && len(b.ofType(contract.LineNotification)) == 0 {
						if why := b.slowed(); why != "" {
							e.Inconclusivef("%s, and the client printed none of them; but %s, so it may not have handled one before the kill", msg, why)
						}
					}
					e.Fail(msg)
				}
			}},

		{Entry: catalogue.Entry{ID: "CLI-CLEAR-ON-DISCONNECT", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-persistence",
			Summary: "An explicit disconnect removes the stored session id; a crash or kill does not."},
			opts: serverOpts{}, runs: 5, waits: longStep, body: func(ctx context.Context, e *clientEnv) {
				a := e.start(longCall)
				e.waitCallUnderway(ctx, a)
				a.kill()
				sid := e.sessionOf(a.n)
				b := e.run(ctx, actionRun(contract.ActionShow))
				switch kept := b.stored().SessionID; {
				case kept == "":
					e.Failf("after the kill show printed no stored session id: the killed run's session %s must be stored until the user disconnects (a crash or kill does not end it)", sid)
				case kept != sid:
					e.Failf("after the kill show printed the stored session id %q, not the killed run's session %s, which a crash or kill must leave stored", kept, sid)
				}
				c := e.run(ctx, actionRun(contract.ActionDisconnect))
				deleted := false
				for _, x := range e.exchanges(c.n) {
					deleted = deleted || (x.Method == http.MethodDelete && x.SessionID == sid && x.Status < 300)
				}
				e.Expect(deleted).To(BeTrue(), "the disconnect must end session %s on the server (DELETE)", sid)
				d := e.run(ctx, actionRun(contract.ActionShow))
				e.Expect(d.stored().SessionID).To(BeEmpty(), "after the user's disconnect no session id may be stored")
				f := e.run(ctx, callRun("echo", map[string]any{"text": "after the disconnect"}), "after the user's disconnect the call must succeed on a new session")
				for _, x := range e.exchanges(f.n) {
					e.Expect(x.SessionID).NotTo(Equal(sid), "#%d: the disconnected session was presented again", x.N)
				}
				e.Expect(e.createdIn(f.n)).NotTo(BeEmpty(), "after the disconnect the client must start a new session")
			}},

		{Entry: catalogue.Entry{ID: "CLI-RECONNECT", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-reconnect",
			Summary: "A restarted client reconnects to the stored session with stored tokens, the negotiated version and a GET stream."},
			opts: serverOpts{token: reconnectToken}, runs: 3, waits: longStep + 2*200*time.Millisecond, body: func(ctx context.Context, e *clientEnv) {
				first := longCall
				first.BearerToken = reconnectToken
				a := e.start(first)
				e.waitCallUnderway(ctx, a)
				a.kill()
				sid := e.sessionOf(a.n)
				version := ""
				for _, x := range e.exchanges(a.n) {
					if x.isFreshInit() && x.RespSessionID == sid {
						version = x.version()
					}
				}
				e.Expect(version).NotTo(BeEmpty(), "no InitializeResult for session %s", sid)
				// The restarted client gets no token: it must use the stored one.
				b := e.run(ctx, callRun("long_operation", map[string]any{"steps": 2, "interval_ms": 200}),
					"the restarted client, given no token, must rejoin its stored session with the stored token and call there")
				xs := e.exchanges(b.n)
				e.Expect(xs).NotTo(BeEmpty(), "run %d sent nothing", b.n)
				e.Expect(xs[0].SessionID).To(Equal(sid), "the restarted client's first request must carry the stored session id")
				opened := false
				for _, x := range xs {
					e.Expect(x.isFreshInit()).To(BeFalse(), "#%d: a new session instead of the stored one", x.N)
					e.Expect(x.SessionID).To(Equal(sid), "#%d: every request goes to the stored session", x.N)
					e.Expect(x.Authorization).To(Equal("Bearer "+reconnectToken), "#%d: the stored bearer token must be sent, with no new auth flow", x.N)
					if !x.isInit() {
						e.Expect(x.ProtocolVersion).To(Equal(version), "#%d: MCP-Protocol-Version must be the negotiated %s", x.N, version)
					}
					opened = opened || (x.Method == http.MethodGet && x.opened())
				}
				e.Expect(opened).To(BeTrue(), "the rejoined client opened no GET stream")
				c := e.run(ctx, actionRun(contract.ActionList), "the restarted client must list the tools of its stored session")
				var served []string
				for _, x := range e.exchanges(c.n) {
					e.Expect(x.SessionID).To(Equal(sid), "#%d: every request goes to the stored session", x.N)
					if x.RPC.Method == "tools/list" {
						served = append(served, toolNames(x.result())...)
					}
				}
				tools := c.ofType(contract.LineTools)
				if len(tools) != 1 {
					e.Failf("run %d (list) printed %d tools lines, want 1", c.n, len(tools))
				}
				var listed []string
				for _, t := range tools[0].Tools {
					listed = append(listed, t.Name)
				}
				e.Expect(listed).NotTo(BeEmpty(), "no tools listed")
				e.Expect(listed).To(ConsistOf(served), "the rejoined client must see the session's tools")
			}},

		{Entry: catalogue.Entry{ID: "CLI-FALLBACK", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-reconnect",
			Summary: "If the stored session is gone, the client clears it and starts a fresh session."},
			opts: serverOpts{}, runs: 5, body: func(ctx context.Context, e *clientEnv) {
				a := e.run(ctx, callRun("echo", map[string]any{"text": "before the restart"}))
				old := e.sessionOf(a.n)
				e.Expect(e.srv.restart()).To(Succeed())
				b := e.run(ctx, callRun("echo", map[string]any{"text": "after the restart"}),
					"the server restarted and lost the stored session: on its 404 the client must start a fresh session (the MCP specification) and call there")
				e.expectPresented(b.n, old, "the restart")
				e.Expect(resultText(b.result().Result)).To(Equal("after the restart"))
				expectFresh(e, b.n, old)
				c := e.run(ctx, callRun("echo", map[string]any{"text": "later"}))
				for _, x := range e.exchanges(c.n) {
					e.Expect(x.SessionID).NotTo(Equal(old), "#%d: the gone session is still stored and presented", x.N)
				}
				// The server refuses to let the client rejoin its current session.
				refused := e.sessionOf(c.n)
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					if x.SessionID != refused {
						return false
					}
					e.srv.refuse(x, w)
					return true
				})
				d := e.run(ctx, callRun("echo", map[string]any{"text": "after a refusal"}),
					"the server refused the stored session (400): the client must start a fresh session and call there")
				e.expectPresented(d.n, refused, "the server's refusal")
				e.Expect(resultText(d.result().Result)).To(Equal("after a refusal"))
				expectFresh(e, d.n, refused)
				f := e.run(ctx, callRun("echo", map[string]any{"text": "last"}))
				for _, x := range e.exchanges(f.n) {
					e.Expect(x.SessionID).NotTo(Equal(refused), "#%d: the refused session is still stored and presented", x.N)
				}
			}},
	}
}

// waitCallUnderway waits until the server has sent a notification on the
// stream of run cr's tools/call: the call is underway. It is what the
// server observes, not what the client prints (a client library may hand
// no notification to its application).
func (e *clientEnv) waitCallUnderway(ctx context.Context, cr *clientRun) {
	e.Helper()
	e.waitForDuring(ctx, cr, "its tools/call, and a notification sent on the call's stream", func(x exchange) bool {
		if x.Run != cr.n || x.RPC.Method != "tools/call" {
			return false
		}
		for _, ev := range x.Events {
			if strings.TrimSpace(ev.Data) != "" {
				return true
			}
		}
		return false
	})
}

// waitStepSent waits until the server has sent step (rendered as steps
// renders it: "l2" is the log message of long_operation's step 2) on the
// stream of run cr's tools/call, and returns that exchange. Like
// waitCallUnderway it keys on what the server wrote, never on what the
// client printed.
func (e *clientEnv) waitStepSent(ctx context.Context, cr *clientRun, step string) exchange {
	e.Helper()
	return e.waitForDuring(ctx, cr, "its tools/call, and "+stepName(step)+" sent on the call's stream", func(x exchange) bool {
		return x.Run == cr.n && x.RPC.Method == "tools/call" && slices.Contains(sentSteps(x), step)
	})
}

// killBetweenSteps kills run cr once the server has sent step on its
// call's stream (waitStepSent) and the client has had up to grace to
// handle it: the kill falls between two steps, as a page refresh while
// nothing is arriving, not inside the client's handling of one. The
// client printing the step ends the grace early; one that prints nothing
// is killed when it is over all the same.
func (e *clientEnv) killBetweenSteps(ctx context.Context, cr *clientRun, step string, grace time.Duration) {
	e.Helper()
	e.betweenSteps(ctx, cr, step, grace)
	cr.kill()
}

// betweenSteps waits until the server has sent step of long_operation on
// the call's stream and the client has had up to grace to handle it (see
// killBetweenSteps).
func (e *clientEnv) betweenSteps(ctx context.Context, cr *clientRun, step string, grace time.Duration) {
	e.Helper()
	e.waitStepSent(ctx, cr, step)
	over := time.NewTimer(grace)
	defer over.Stop()
wait:
	for {
		lines, exited, changed := cr.snapshot()
		if exited || slices.Contains(steps(lines), step) {
			break
		}
		select {
		case <-changed:
		case <-over.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
}

// sentAccount says, from the server's own record, which notifications of
// long_operation it sent on each stream of runs ns: "run 1's #4 (POST
// tools/call): l1 l2; run 2's #9 (GET, Last-Event-ID 0_3): l3 l4".
func (e *clientEnv) sentAccount(ns ...int) string {
	var parts []string
	for _, n := range ns {
		for _, x := range e.exchanges(n) {
			if s := sentSteps(x); len(s) > 0 {
				parts = append(parts, fmt.Sprintf("run %d's #%d (%s): %s", n, x.N, x.stream(), strings.Join(s, " ")))
			}
		}
	}
	if len(parts) == 0 {
		return "the server sent none of them"
	}
	return "the server sent " + strings.Join(parts, "; ")
}

// stream names the stream an exchange's answer is, for messages.
func (x exchange) stream() string {
	switch {
	case x.Method == http.MethodGet && x.LastEventID != "":
		return fmt.Sprintf("GET, Last-Event-ID %q", kit.Clip(x.LastEventID, 80)) // the client's bytes
	case x.Method == http.MethodGet:
		return "GET"
	}
	return x.Method + " " + x.RPC.Method
}

// expectPresented skips the check unless run n presented session sid,
// the one the client used before (gone since what happened): a client
// that never rejoins a stored session, or stores none, has nothing to fall
// back from, and CLI-RECONNECT grades the rejoin itself.
func (e *clientEnv) expectPresented(n int, sid, since string) {
	e.Helper()
	for _, x := range e.exchanges(n) {
		if x.SessionID == sid {
			return
		}
	}
	e.Skipf(report.NotApplicable, "not applicable: after %s run %d never presented session %s, the one the client used before (it started a new session at once, whether it stores no session id or does not rejoin a stored one), so there was no gone session to fall back from; CLI-RECONNECT grades rejoining a stored session", since, n, sid)
}

// expectFresh checks that run n called its tool on a session it created
// itself and, once the server answered 404 for old, presented old no more.
func expectFresh(e *clientEnv, n int, old string) {
	calls := e.toolCalls(n)
	e.Expect(calls).NotTo(BeEmpty(), "run %d sent no tools/call", n)
	last := calls[len(calls)-1]
	e.Expect(e.createdIn(n)).To(ContainElement(last.SessionID), "run %d: the tool must be called on a fresh session (initialize without a session id), not on %q", n, last.SessionID)
	var goneAt time.Time
	for _, x := range e.exchanges(n) {
		if x.SessionID == old && x.Status == http.StatusNotFound && goneAt.IsZero() {
			goneAt = x.At
		}
	}
	if goneAt.IsZero() {
		return
	}
	for _, x := range after(e.exchanges(n), goneAt) {
		e.Expect(x.SessionID).NotTo(Equal(old), "#%d: session %s was presented again after the server answered 404 for it", x.N, old)
	}
}
