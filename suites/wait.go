package suites

import (
	"context"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/target"
)

// pollInterval is how often waits look at what arrived.
const pollInterval = 20 * time.Millisecond

// minQuiet is the shortest window in which nothing may arrive for a
// negative assertion ("no response on the GET stream").
const minQuiet = 300 * time.Millisecond

// eventually is Gomega's Eventually bounded by the check's deadline.
func eventually(ctx context.Context, actual any) AsyncAssertion {
	return Eventually(ctx, actual).WithTimeout(remaining(ctx)).WithPolling(pollInterval)
}

// consistently holds a negative assertion over a quiet window.
func consistently(ctx context.Context, d time.Duration, actual any) AsyncAssertion {
	return Consistently(ctx, actual).WithTimeout(d).WithPolling(pollInterval)
}

func remaining(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return DefaultCheckTimeout
}

// waitUntil polls cond for at most d; it reports whether cond became true.
// Checks use it where not seeing something is not a failure in itself.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-t.C:
			return cond()
		case <-tick.C:
		}
	}
}

// pause waits d, the time a check must let pass on purpose (a client's
// silence, a refresh window), or until the check's deadline.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		Expect(ctx.Err()).NotTo(HaveOccurred(), "deadline reached while waiting %v", d)
	case <-t.C:
	}
}

// toolRun is how long the notifying tool runs.
func toolRun(c *target.Config) time.Duration {
	n := c.Tools.Notifying
	if n == nil {
		return 0
	}
	return time.Duration(n.Notifications) * n.Interval.D()
}

// quiet is the window for negative assertions: two notification intervals.
func quiet(c *target.Config) time.Duration {
	if n := c.Tools.Notifying; n != nil && 2*n.Interval.D() > minQuiet {
		return 2 * n.Interval.D()
	}
	return minQuiet
}

// notifyBudget is the extra deadline of a check that runs the notifying tool.
func notifyBudget(c *target.Config) time.Duration { return 3 * toolRun(c) }
