package serverchecks

import (
	"time"

	"github.com/mcp-conform/mcp-conform/target"
)

// minQuiet is the shortest window in which nothing may arrive for a
// negative assertion ("no response on the GET stream").
const minQuiet = 300 * time.Millisecond

// toolRun is how long the notifying tool runs.
func toolRun(c *target.Profile) time.Duration {
	n := c.Tools.Notifying
	if n == nil {
		return 0
	}
	return time.Duration(n.Notifications) * n.Interval.D()
}

// quiet is the window for negative assertions: two notification intervals.
func quiet(c *target.Profile) time.Duration {
	if n := c.Tools.Notifying; n != nil && 2*n.Interval.D() > minQuiet {
		return 2 * n.Interval.D()
	}
	return minQuiet
}

// notifyNeed is what a check that runs the notifying tool needs: the
// tool's run and two quiet windows (a refresh, a negative assertion).
func notifyNeed(c *target.Profile) time.Duration { return toolRun(c) + 2*quiet(c) }
