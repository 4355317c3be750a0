package serverchecks

import (
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/target"
)

// TestRestartNeedsMeasuredStart: a check that restarts the target needs
// the start time measured when the run began, beyond the harness's
// bounded stop; the others need no more for it. A target that takes 12 s
// to start is given the time to come back.
func TestRestartNeedsMeasuredStart(t *testing.T) {
	quick := Checks(&Target{Config: &target.Profile{}})
	slow := Checks(&Target{Config: &target.Profile{}, StartTook: 12 * time.Second})
	restarts := 0
	for i, c := range slow {
		more := c.Need - quick[i].Need
		switch {
		case c.Entry.Restarts && more != 12*time.Second:
			t.Errorf("%s restarts the target, and needs %v more for a 12s start", c.Entry.ID, more)
		case !c.Entry.Restarts && more != 0:
			t.Errorf("%s does not restart the target, yet needs %v more", c.Entry.ID, more)
		}
		if c.Entry.Restarts {
			restarts++
			if c.Need < 12*time.Second+restartStop {
				t.Errorf("%s needs %v, less than the start and the stop", c.Entry.ID, c.Need)
			}
		}
	}
	if restarts == 0 {
		t.Fatal("no check restarts the target")
	}
}
