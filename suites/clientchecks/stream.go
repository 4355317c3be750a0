package clientchecks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
)

// retryField is the retry the scripted server sends before it closes a
// stream: longer than common default reconnect delays (1 s), so a client
// that ignores it is seen.
const retryField = 1200 * time.Millisecond

// retrySlack is how much later than retryField a reconnect may come.
const retrySlack = 1500 * time.Millisecond

// CLI-RESUME's call: resumeSteps steps, resumeInterval apart.
const (
	resumeSteps    = 6
	resumeInterval = 400 * time.Millisecond
)

// CLI-RETRY-FIELD's call: retrySteps steps, retryInterval apart.
const (
	retrySteps    = 4
	retryInterval = 300 * time.Millisecond
)

// streamChecks are the streams checks.
func streamChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-RESUME", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-resume",
			Summary: "The client resumes with Last-Event-ID; replayed events reach handlers exactly once."},
			opts: serverOpts{}, runs: 2, waits: resumeSteps * resumeInterval, body: func(ctx context.Context, e *clientEnv) {
				const n, interval = resumeSteps, resumeInterval
				a := e.start(callRun("long_operation", map[string]any{"steps": n, "interval_ms": interval.Milliseconds()}))
				// The kill keys on what the server sent, not on what the
				// client printed: a client that hands no notification to its
				// application is killed all the same, and graded on them below.
				e.killBetweenSteps(ctx, a, "l2", interval/2)
				callX := e.toolCalls(a.n)[0]
				progress := callX.hasProgressToken()
				// The refresh window: steps go on while no client is there.
				e.Pause(2 * interval)
				b := e.run(ctx, actionRun(contract.ActionResume))
				e.Expect(resultText(b.result().Result)).To(Equal("completed 6 steps"), "the resumed call's result")
				sent := eventIDs(callX)
				resumed := false
				for _, x := range e.exchanges(b.n) {
					if x.Method == http.MethodGet && slices.Contains(sent, x.LastEventID) {
						resumed = true
					}
				}
				e.Expect(resumed).To(BeTrue(), "the restarted client never resumed the call's stream with Last-Event-ID (one of %q)", sent)
				before, after := a.ofType(contract.LineNotification), b.ofType(contract.LineNotification)
				all := append(before, after...)
				printed := func() string {
					return fmt.Sprintf("the client printed %s before the kill and %s after it", stepsList(steps(before)), stepsList(steps(after)))
				}
				if !sameSteps(steps(all), allSteps(n, progress)) {
					e.Failf("every notification must reach the application exactly once, %s: %s; %s", stepsText(progress), e.sentAccount(a.n, b.n), printed())
				}
				// Across two streams (the resumed call's and the standalone one)
				// the order of arrival is the server's and the network's; on each
				// stream it must be kept.
				for stream, got := range byStream(all) {
					if !isSubsequence(got, allSteps(n, progress)) {
						e.Failf("notifications out of order on the %q stream: %q; %s; %s", stream, got, e.sentAccount(a.n, b.n), printed())
					}
				}
				e.expectUniqueEventIDs(all)
			}},

		{Entry: catalogue.Entry{ID: "CLI-RETRY-FIELD", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "client-resume",
			Summary: "The client waits the server's retry milliseconds before reconnecting an SSE stream."},
			opts: serverOpts{}, runs: 1, waits: retrySteps*retryInterval + retryField + retrySlack, body: func(ctx context.Context, e *clientEnv) {
				const n = retrySteps
				var armed atomic.Bool
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					if x.tool() == "long_operation" && armed.CompareAndSwap(false, true) {
						// The first step sends a log message, and a progress
						// notification before it if the call asked for them.
						// Whether a priming event comes first depends on the
						// revision, so the cut keys on the log message itself.
						first := "its log message (l1)"
						if x.hasProgressToken() {
							first = "its progress notification and log message (p1 l1)"
						}
						e.srv.rec.note(x, "to be closed right after the first step's notifications, %s, with retry %v", first, retryField)
						e.srv.cutWhen(w, func(ev sseEvent) bool { return dataStep(ev.Data) == "l1" }, retryField)
					}
					return false
				})
				r := e.run(ctx, callRun("long_operation", map[string]any{"steps": n, "interval_ms": retryInterval.Milliseconds()}))
				e.Expect(resultText(r.result().Result)).To(Equal("completed 4 steps"))
				callX := e.toolCalls(r.n)[0]
				e.Expect(callX.CutAt.IsZero()).To(BeFalse(), "the server did not get to close the stream")
				sent := eventIDs(callX)
				var first *exchange
				for _, x := range e.exchanges(r.n) {
					if x.Method == http.MethodGet && slices.Contains(sent, x.LastEventID) {
						first = &x
						break
					}
				}
				e.Expect(first).NotTo(BeNil(), "the client never reconnected the closed stream with Last-Event-ID (one of %q)", sent)
				waited := first.At.Sub(callX.CutAt)
				e.Expect(waited).To(BeNumerically(">=", retryField), "#%d: reconnected %v after the close, before the server's retry of %v", first.N, waited, retryField)
				r.onTime(waited, retryField+retrySlack, "#%d: reconnected only %v after the close (retry %v, slack %v)", first.N, waited, retryField, retrySlack)
				lines := r.ofType(contract.LineNotification)
				// Notifications sent while the stream is closed may take the
				// session's GET stream: exactly once, but not always in order.
				progress := callX.hasProgressToken()
				if !sameSteps(steps(lines), allSteps(n, progress)) {
					e.Failf("every notification must reach the application exactly once, %s: %s; the client printed %s", stepsText(progress), e.sentAccount(r.n), stepsList(steps(lines)))
				}
				e.expectUniqueEventIDs(lines)
			}},
	}
}

// expectUniqueEventIDs: no event id reached the application twice.
func (e *clientEnv) expectUniqueEventIDs(lines []outLine) {
	seen := map[string]bool{}
	for _, l := range lines {
		if l.EventID == "" {
			continue
		}
		e.Expect(seen[l.EventID]).To(BeFalse(), "event %s was handed to the application twice", l.EventID)
		seen[l.EventID] = true
	}
}
