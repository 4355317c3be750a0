package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// extension says that what a check expects rests on this project's
// resilience design (the recovery hint, data.resume, retrying a failed call
// once, the allow-list of session-expired errors): a client that does
// only what the MCP specification requires is not wrong by it.
const extension = "this project's resilience extension, not the MCP specification"

// onCalls scripts the server's answer to tools/call requests; i counts
// them from 1 since the hook was set.
func (e *clientEnv) onCalls(f func(i int, x *exchange, w http.ResponseWriter) bool) {
	var mu sync.Mutex
	n := 0
	e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
		if x.RPC.Method != "tools/call" {
			return false
		}
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		return f(i, x, w)
	})
}

// expireFirstCall makes the server expire the session at the first tools/call.
func (e *clientEnv) expireFirstCall() {
	e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
		if i == 1 {
			e.srv.expire(x, x.SessionID)
		}
		return false
	})
}

// expectRetried checks that run n sent its tools/call exactly twice, the
// second time on a session that an initialize without a session id made
// after the first failed.
func expectRetried(e *clientEnv, n int) (failed, retry exchange) {
	e.Helper()
	calls := e.toolCalls(n)
	if len(calls) == 1 && slices.ContainsFunc(after(e.exchanges(n), calls[0].At), exchange.isFreshInit) {
		e.Failf("run %d started a new session after its call failed (#%d), as the MCP specification requires on a 404, but did not retry the call; retrying a failed call once is %s", n, calls[0].N, extension)
	}
	e.expectCount(calls, 2, "run %d: the failed call must be retried exactly once (retrying is %s); its tools/call", n, extension)
	failed, retry = calls[0], calls[1]
	e.Expect(retry.SessionID).NotTo(Equal(failed.SessionID), "#%d: the retry must go to a new session, not the failed one", retry.N)
	made := false
	for _, x := range after(e.exchanges(n), failed.At) {
		made = made || (x.isFreshInit() && x.RespSessionID == retry.SessionID && x.At.Before(retry.At))
	}
	e.Expect(made).To(BeTrue(), "#%d: session %s of the retry was not made by an initialize after the failure", retry.N, retry.SessionID)
	return failed, retry
}

// expectNoReconnect checks that run n made no new session after t.
func expectNoReconnect(e *clientEnv, n int, t time.Time, why string) {
	e.Helper()
	for _, x := range after(e.exchanges(n), t) {
		e.Expect(x.isFreshInit()).To(BeFalse(), "#%d: %s must not cause a reconnect", x.N, why)
	}
}

// answered is the structuredContent of the server's answer to run n's
// last tools/call of tool, from the server's own record: a client may
// print a result without it (a library that hands over the text content
// only), and what the server answered is what the check keys on.
func (e *clientEnv) answered(n int, tool string) (map[string]json.RawMessage, exchange) {
	e.Helper()
	var got map[string]json.RawMessage
	var at exchange
	var seen []string
	for _, x := range e.toolCalls(n) {
		if x.tool() != tool {
			continue
		}
		seen = append(seen, fmt.Sprintf("#%d %d", x.N, x.Status))
		if sc := structured(x.result()); sc != nil {
			got, at = sc, x
		}
	}
	if got == nil {
		e.Failf("the server answered no %s of run %d with a structured result (its %s calls, with their HTTP status: %v)", tool, n, tool, seen)
	}
	return got, at
}

// jobID is the job_id the server minted for run n's last job_start.
func (e *clientEnv) jobID(n int) string {
	e.Helper()
	sc, x := e.answered(n, "job_start")
	id := str(sc["job_id"])
	if id == "" {
		e.Failf("#%d: the server's job_start result has no job_id: %s", x.N, x.result())
	}
	return id
}

// pollJob runs job_get until the job has completed and returns its
// snapshot, as the server answered it.
func (e *clientEnv) pollJob(ctx context.Context, job string) (*clientRun, map[string]string) {
	e.Helper()
	status := ""
	for range 50 {
		r := e.run(ctx, callRun("job_get", map[string]any{"job_id": job}))
		snap := map[string]string{}
		sc, _ := e.answered(r.n, "job_get")
		for k, v := range sc {
			snap[k] = strings.Trim(string(v), `"`)
		}
		if status = snap["status"]; status != "running" {
			if status == "completed" {
				return r, snap
			}
			break
		}
		e.Pause(100 * time.Millisecond)
	}
	e.Failf("job %s did not complete: job_get said its status is %q", job, status)
	return nil, nil
}

// cancelledSteps is the length of CLI-RETRY-ONCE's call that the user
// cancels: a client that ignores the cancel ends with it.
const cancelledSteps = 20

// expiryChecks are the expiry checks.
func expiryChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-404-REINIT", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-expiry-handling",
			Summary: "On 404 for a request with a session id, the client starts a new session and retries once."},
			opts: serverOpts{plain: true}, runs: 2, body: func(ctx context.Context, e *clientEnv) {
				e.expireFirstCall()
				a := e.run(ctx, callRun("echo", map[string]any{"text": "retried"}),
					"on the plain 404 for its session the client must start a new session, as the MCP specification requires, and retry the call there once ("+extension+")")
				e.Expect(resultText(a.result().Result)).To(Equal("retried"))
				failed, retry := expectRetried(e, a.n)
				e.Expect(failed.Status).To(Equal(http.StatusNotFound), "#%d", failed.N)
				e.Expect(retry.arguments()).To(Equal(failed.arguments()), "#%d: the retry must be the same call", retry.N)
				// The new session expires too: one retry, then the error.
				e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
					e.srv.expire(x, x.SessionID)
					return false
				})
				b := e.start(callRun("echo", map[string]any{"text": "expires twice"}))
				b.fails(ctx, "the 404 of the retry")
				e.expectCount(e.toolCalls(b.n), 2, "after the retry also got 404 the client must stop: one retry, no loop (%s); its tools/call", extension)
			}},

		{Entry: catalogue.Entry{ID: "CLI-ENVELOPE", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-expiry-handling",
			Summary: "On the -32003 envelope the client re-initializes, re-issues resume.method with its token, reports one reconnect."},
			opts: serverOpts{}, runs: 4 /* job_start, then job_get; twice */, body: func(ctx context.Context, e *clientEnv) {
				job := callRun("job_start", map[string]any{"steps": 1, "interval_ms": 0})
				start := e.run(ctx, job)
				// The job ids are the ones the server minted, whatever the
				// client printed of its results.
				done, snap := e.pollJob(ctx, e.jobID(start.n))
				e.Expect(snap["resume_token"]).NotTo(BeEmpty(), "the completed job has no resume_token")
				lines, _, _ := done.snapshot()
				baseline := countReconnected(lines)
				e.expireFirstCall()
				c := e.run(ctx, job, "on the 404 with the -32003 envelope the client must start a new session, as the MCP specification requires on a 404, and re-issue job_start with its resume token (data.resume, "+extension+")")
				failed, retry := expectRetried(e, c.n)
				e.Expect(failed.Status).To(Equal(http.StatusNotFound), "#%d", failed.N)
				e.Expect(failed.errorCode()).To(Equal(wire.CodeSessionExpired), "#%d: the server sent the -32003 envelope", failed.N)
				e.Expect(retry.tool()).To(Equal("job_start"), "#%d: the call re-issued must be data.resume.method of the envelope (%s)", retry.N, extension)
				e.Expect(str(retry.arguments()["resume_token"])).To(Equal(snap["resume_token"]),
					"#%d: the re-issued job_start must carry the stored resume token in resume_token (data.resume.via, %s)", retry.N, extension)
				lines, _, _ = c.snapshot()
				e.Expect(countReconnected(lines)).To(Equal(baseline+1),
					"one reconnected status for the expiry (a run without it reported %d; status lines are this project's client contract, not the MCP specification)", baseline)
				e.srv.setHook(nil)
				_, snap2 := e.pollJob(ctx, e.jobID(c.n))
				e.Expect(snap2["conversation_id"]).To(Equal(snap["conversation_id"]), "the conversation must go on after the expiry")
				e.Expect(snap2["turn"]).To(Equal("2"), "the conversation's next turn")
			}},

		{Entry: catalogue.Entry{ID: "CLI-RETRY-ONCE", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-expiry-handling",
			Summary: "An allow-listed session-expired error on the five operations triggers exactly one retry on the new session."},
			opts: serverOpts{}, runs: 11, waits: cancelledSteps * longStep, body: func(ctx context.Context, e *clientEnv) {
				expired := []string{"Invalid params: Invalid or expired session", "Session expired", "Expired session, please reconnect", "SESSION NOT FOUND", "Unknown session 4f2a"}
				for _, m := range expired {
					e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
						if i > 1 {
							return false
						}
						e.srv.rpcError(x, w, -32000, m)
						return true
					})
					r := e.run(ctx, callRun("echo", map[string]any{"text": m}),
						fmt.Sprintf("after the JSON-RPC error %q, on the allow-list of session-expired errors, the client must start a new session and retry the call there once (%s)", m, extension))
					e.Expect(resultText(r.result().Result)).To(Equal(m), "after the error %q the call must be retried and succeed (the allow-list of session-expired errors is %s)", m, extension)
					expectRetried(e, r.n)
				}
				for _, m := range []string{"Tool execution failed", "Invalid params: missing text", "", "Session limit reached"} {
					e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
						if i > 1 {
							return false
						}
						e.srv.rpcError(x, w, -32000, m)
						return true
					})
					r := e.start(callRun("echo", map[string]any{"text": m}))
					r.wait(ctx)
					r.declined()
					// The retry is the cause; the exit status that follows from it is not.
					calls := e.toolCalls(r.n)
					e.expectCount(calls, 1, "the error %q is not on the allow-list of session-expired errors (%s): no retry; its tools/call", m, extension)
					expectNoReconnect(e, r.n, calls[0].At, fmt.Sprintf("the error %q", m))
					r.fails(ctx, fmt.Sprintf("the JSON-RPC error %q", m))
				}
				e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
					e.srv.rpcError(x, w, -32000, "Session expired")
					return true
				})
				r := e.start(callRun("echo", map[string]any{"text": "fails twice"}))
				r.fails(ctx, "the retry's error")
				e.expectCount(e.toolCalls(r.n), 2, "a failed retry must surface its error: one retry, no loop (%s); its tools/call", extension)
				// The user's cancel of a call in progress is never retried.
				e.srv.setHook(nil)
				c := e.start(callRun("long_operation", map[string]any{"steps": cancelledSteps, "interval_ms": longStep.Milliseconds()}))
				e.waitCallUnderway(ctx, c)
				at := c.interrupt()
				c.wait(ctx)
				e.expectCount(e.toolCalls(c.n), 1, "a cancel must never cause a retry; its tools/call")
				expectNoReconnect(e, c.n, at, "a cancel")
			}},

		{Entry: catalogue.Entry{ID: "CLI-CANCEL-WAIT", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-expiry-handling",
			Summary: "A cancel during the reconnect wait ends it promptly as a cancel."},
			opts: serverOpts{}, runs: 1, waits: promptly, body: func(ctx context.Context, e *clientEnv) {
				var expired atomic.Bool
				// The new initialize is held until the user's cancel, then
				// answered: a client that went on would now send the call again.
				cancelled := make(chan struct{})
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					switch {
					case x.RPC.Method == "tools/call" && expired.CompareAndSwap(false, true):
						e.srv.expire(x, x.SessionID)
					case x.isFreshInit() && expired.Load():
						return !e.srv.holdUntil(x, r, cancelled)
					}
					return false
				})
				r := e.start(callRun("echo", map[string]any{"text": "never answered"}))
				e.waitForDuring(ctx, r, "a new initialize after the 404 (the client waiting to reconnect)", func(x exchange) bool {
					return strings.HasPrefix(x.Note, "held")
				})
				at := r.interrupt()
				// The client has half the time it has to end to act on the
				// cancel (a signal is handled in milliseconds); one still
				// running then gets its initialize answered, so a library
				// that goes on with the call after its application
				// cancelled it shows that.
				select {
				case <-r.done:
				case <-time.After(promptly / 2):
				}
				close(cancelled)
				// A saturated machine may delay the exit; it gets the run's
				// budget more, and a late end is then inconclusive (onTime).
				grace := promptly
				if r.slowed() != "" {
					grace += r.budget()
				}
				select {
				case <-r.done:
				case <-time.After(grace):
					r.kill()
					e.Failf("the client was still waiting %v after the user's cancel (SIGINT); it must end within %v", grace, promptly)
				}
				// A call sent again once the initialize was let through is
				// the strongest sign the cancel was not honoured: judged first.
				for _, x := range after(e.exchanges(r.n), at) {
					if x.RPC.Method == "tools/call" && r.slowed() != "" {
						e.Inconclusivef("#%d: the call was sent again %v after the user's cancel, once the held initialize was answered; but %s, so the client may not have handled the signal yet",
							x.N, x.At.Sub(at).Round(time.Millisecond), r.slowed())
					}
					e.Expect(x.RPC.Method).NotTo(Equal("tools/call"), "#%d: the call was sent again after the user's cancel, once the held initialize was answered %v after it", x.N, (promptly / 2).Round(time.Millisecond))
				}
				r.onTime(r.ended.Sub(at), promptly, "the client ended %v after the user's cancel (SIGINT), not within %v", r.ended.Sub(at).Round(10*time.Millisecond), promptly)
				r.declined()
				e.Expect(r.cancelled()).To(BeTrue(), "the cancel must be reported as a cancel (exit status %d, an end by SIGINT, or a cancelled line), not as an error: %s",
					contract.ExitCancelled, r.exitText())
			}},

		{Entry: catalogue.Entry{ID: "CLI-RESTART-HINT", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "restart-recovery",
			Summary: "On a 404 carrying a new Mcp-Session-Id the client adopts it and retries at once."},
			opts: serverOpts{hint: true}, runs: 3, body: func(ctx context.Context, e *clientEnv) {
				a := e.run(ctx, callRun("echo", map[string]any{"text": "one"}))
				old := e.sessionOf(a.n)
				e.Expect(e.srv.restart()).To(Succeed())
				// A restarted client meets the restarted server.
				b := e.run(ctx, callRun("echo", map[string]any{"text": "two"}),
					"the server restarted: on the 404 for the stored session, which names a new one, the client must call there (the recovery hint, "+extension+"), or start a new session as the MCP specification requires")
				e.Expect(resultText(b.result().Result)).To(Equal("two"))
				for _, x := range e.exchanges(b.n) {
					if x.SessionID == old && x.Status == http.StatusNotFound && x.RespSessionID != "" {
						expectAdopted(e, b, x)
						break
					}
				}
				// The server restarts under a call.
				var restarted atomic.Bool
				e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
					if restarted.CompareAndSwap(false, true) {
						if err := e.srv.restart(); err != nil {
							e.srv.rec.note(x, "restart failed: %v", err)
						}
					}
					return false
				})
				c := e.run(ctx, callRun("echo", map[string]any{"text": "three"}),
					"the server restarted under the call: on the 404 naming a new session the client must retry the call there (the recovery hint, "+extension+")")
				e.Expect(resultText(c.result().Result)).To(Equal("three"))
				calls := e.toolCalls(c.n)
				e.expectCount(calls, 2, "the call must be retried once on the session the server named (the recovery hint, %s); its tools/call", extension)
				e.Expect(calls[0].Status).To(Equal(http.StatusNotFound), "#%d", calls[0].N)
				e.Expect(calls[0].RespSessionID).NotTo(BeEmpty(), "#%d: the 404 carries no recovery hint", calls[0].N)
				expectAdopted(e, c, calls[0])
			}},
	}
}

// expectAdopted checks that after gone, a 404 naming a new session, run cr
// used that session at once and made none of its own.
func expectAdopted(e *clientEnv, cr *clientRun, gone exchange) {
	e.Helper()
	n := cr.n
	hint := gone.RespSessionID
	var next *exchange
	for _, x := range after(e.exchanges(n), gone.At) {
		if x.isFreshInit() {
			e.Failf("#%d: a new initialize instead of the session %s the server named in #%d. Starting a new session on a 404 is what the MCP specification requires; adopting the session the 404 names (the recovery hint) is %s", x.N, hint, gone.N, extension)
		}
		if next == nil && x.SessionID == hint {
			next = &x
		}
	}
	e.Expect(next).NotTo(BeNil(), "the client never used the session %s the server named in #%d (the recovery hint, %s)", hint, gone.N, extension)
	took := next.At.Sub(gone.Done)
	cr.onTime(took, time.Second, "#%d: the retry with the named session came %v after the 404; it must come at once, within 1s (the recovery hint, %s)", next.N, took.Round(time.Millisecond), extension)
}

// statuses renders the run's status lines; a reconnected connect is "connected*".
func statuses(lines []outLine) []string {
	var out []string
	for _, l := range lines {
		if l.Type != contract.LineStatus {
			continue
		}
		s := l.Status
		if s == contract.StatusConnected && l.Reconnected {
			s += "*"
		}
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// statusChecks are the status checks.
func statusChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-STATUS", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-status",
			Summary: "Status transitions connecting, connected, reconnecting, connected (reconnected), disconnected are reported."},
			opts: serverOpts{}, runs: 2, body: func(ctx context.Context, e *clientEnv) {
				e.expireFirstCall()
				a := e.run(ctx, callRun("echo", map[string]any{"text": "status"}),
					"the session expires at the call: the client must reconnect (a new session, as the MCP specification requires on a 404) and retry, so that its status lines go reconnecting, then connected with reconnected (this project's client contract)")
				b := e.run(ctx, actionRun(contract.ActionDisconnect))
				la, _, _ := a.snapshot()
				lb, _, _ := b.snapshot()
				got := append(statuses(la), statuses(lb)...)
				want := []string{contract.StatusConnecting, contract.StatusConnected, contract.StatusReconnecting, contract.StatusConnected + "*", contract.StatusDisconnected}
				e.Expect(isSubsequence(want, got)).To(BeTrue(), "status lines %q (connected* = reconnected) must go %q", got, want)
			}},
	}
}
