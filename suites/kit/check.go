// Package kit is what every conformance check is built from, on either side:
// the check itself (a catalogue entry, the time it needs, its body), the
// per-check handle T (Gomega assertions, skip, fail, cleanup, the exchange
// log), and the waits that bound every check by its deadline.
//
// A check runs in a goroutine of its own, beside other checks, so nothing
// here is global: every assertion goes through the check's own T.
package kit

import (
	"context"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// Check is one conformance check.
type Check struct {
	Entry catalogue.Entry
	// Need is how long the check takes against a target that behaves,
	// derived from what the target declares (the notifying tool's run,
	// the grace timings). The check's deadline is 2*Need plus the run's
	// margin, so a target that never sends what a check awaits fails it
	// in bounded time.
	Need time.Duration
	// Run is the body. It asserts through t; returning is a pass.
	Run func(t *T)
}

// Deadline is how long the check may take: twice its need plus margin.
func (c Check) Deadline(margin time.Duration) time.Duration { return 2*c.Need + margin }

// State is how a check ended.
type State int

// States.
const (
	Passed State = iota
	Failed
	Skipped
	// Abandoned is a check whose body did not return by its deadline plus
	// the grace the runner allows; it is failed and left behind.
	Abandoned
	// Inconclusive is a check that could not observe its behaviour: its
	// own setup timed out, its own delays broke the premise, or what the
	// target legitimately chose put the observation beyond its budget.
	// It is never the target's failure; the runner tries it once more.
	Inconclusive
)

// Result is the outcome of running one check.
type Result struct {
	State State
	// Message says why the check failed or was skipped.
	Message string
	// Cause is why a skipped check was skipped.
	Cause report.Cause
	// Location is the file:line of the failed assertion.
	Location string
	// Premise is the premise the failed step stood on (T.OnPremise);
	// empty for a failure of the check's own.
	Premise catalogue.Premise
	// Exchange is the check's exchange log (requests, statuses, SSE lines,
	// faults) with times from its start.
	Exchange string
	// Timeline is the exchange log as structured events.
	Timeline []report.Event
	Took     time.Duration
	// Retried, when set, is why the first attempt was inconclusive: this
	// result is the second attempt's.
	Retried string
}

// abandonGrace is how long after its deadline a check's body may take to
// notice that its context ended before the runner gives up on it.
var abandonGrace = 10 * time.Second

// Execute runs c with deadline d under ctx and returns its result. The
// check's cleanups run when its body ends, LIFO, each with its own short
// context (like t.Cleanup in package testing).
func Execute(ctx context.Context, c Check, d time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	t := newT(ctx, c.Entry)
	done := make(chan Result, 1)
	began := time.Now()
	go func() {
		r := t.run(c.Run)
		r.Took = time.Since(began)
		done <- r
	}()
	hard := time.NewTimer(d + abandonGrace)
	defer hard.Stop()
	ended, left := ctx.Done(), (<-chan time.Time)(nil)
	for {
		select {
		case r := <-done:
			return r
		case <-hard.C:
			return Result{
				State:    Abandoned,
				Message:  "the check did not end within its deadline of " + d.Round(time.Millisecond).String() + " (a wait ignored it); it was abandoned",
				Exchange: t.log.String(),
				Timeline: t.log.Events(),
				Took:     time.Since(began),
			}
		case <-ended:
			ended = nil
			if unobservable(ctx) != nil {
				left = time.After(leaveGrace)
			}
		case <-left:
			return Result{
				State:    Inconclusive,
				Message:  unobservable(ctx).Error() + " (the check did not end when its context did; it was left behind)",
				Exchange: t.log.String(),
				Timeline: t.log.Events(),
				Took:     time.Since(began),
			}
		}
	}
}
