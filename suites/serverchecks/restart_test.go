package serverchecks

import (
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/target"
)

// TestRestartNeedsMeasuredStart: a check that restarts the target needs
// the restart's time the harness derives (its bounded stop and the start
// time it measured); the others need no more for it. A target that takes
// 12 s to start is given the time to come back.
func TestRestartNeedsMeasuredStart(t *testing.T) {
	quick := Checks(&Target{Config: &target.Profile{}})
	slow := Checks(&Target{Config: &target.Profile{}, RestartNeed: 5*time.Second + 12*time.Second})
	restarts := 0
	for i, c := range slow {
		more := c.Need - quick[i].Need
		switch {
		case c.Entry.Restarts && more != 17*time.Second:
			t.Errorf("%s restarts the target, and needs %v more for a 5s stop and a 12s start", c.Entry.ID, more)
		case !c.Entry.Restarts && more != 0:
			t.Errorf("%s does not restart the target, yet needs %v more", c.Entry.ID, more)
		}
		if c.Entry.Restarts {
			restarts++
			if c.Need < 17*time.Second {
				t.Errorf("%s needs %v, less than the start and the stop", c.Entry.ID, c.Need)
			}
		}
	}
	if restarts == 0 {
		t.Fatal("no check restarts the target")
	}
}
