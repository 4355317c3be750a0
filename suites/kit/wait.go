package kit

import (
	"context"
	"fmt"
	"time"

	"github.com/onsi/gomega/types"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// PollInterval is how often waits look at what arrived.
const PollInterval = 20 * time.Millisecond

// Eventually is Gomega's Eventually bounded by the check's deadline. Give
// it a description of what is awaited: a failure says it, and how long
// the check waited.
func (t *T) Eventually(actual any) types.AsyncAssertion {
	return t.Gomega.Eventually(t.ctx, actual).WithTimeout(remaining(t.ctx)).WithPolling(PollInterval)
}

// Consistently holds a negative assertion for d ("nothing arrives").
func (t *T) Consistently(d time.Duration, actual any) types.AsyncAssertion {
	return t.Gomega.Consistently(t.ctx, actual).WithTimeout(d).WithPolling(PollInterval)
}

// remaining is the time left before ctx's deadline.
func remaining(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return time.Minute
}

// WaitUntil polls cond for at most d; it reports whether cond became true.
// Checks use it where not seeing something is not a failure in itself.
func (t *T) WaitUntil(d time.Duration, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-t.ctx.Done():
			return cond()
		case <-timer.C:
			return cond()
		case <-tick.C:
		}
	}
}

// Pause lets d pass on purpose (a client's silence, a refresh window); the
// check fails if its deadline comes first.
func (t *T) Pause(d time.Duration) {
	t.log.Add(&report.Event{Kind: report.KindSilence, Text: fmt.Sprintf("silent for %v", d), Seconds: d.Seconds()}, "")
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		t.Failf("%s while pausing for %v", endedEarly(t.ctx), d)
	case <-timer.C:
	}
}
