package tools

import (
	"context"
	"errors"
	"time"

	"k8s.io/utils/clock"
)

// errSessionEnded stops an operation whose session ended.
var errSessionEnded = errors.New("session ended")

// pacer waits the interval before each step of an operation on one timer
// for all its steps: a timer per step cost three allocations a step.
type pacer struct {
	clock    clock.Clock
	interval time.Duration
	t        clock.Timer
}

// wait returns once the interval has passed since the last step, or with
// ctx's error, or errSessionEnded once ended is closed (nil: never).
func (p *pacer) wait(ctx context.Context, ended <-chan struct{}) error {
	if p.interval <= 0 {
		return nil
	}
	if p.t == nil {
		p.t = p.clock.NewTimer(p.interval)
	} else {
		p.t.Reset(p.interval) // drained: the last wait received from it
	}
	select {
	case <-p.t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-ended:
		return errSessionEnded
	}
}

// stop releases the timer.
func (p *pacer) stop() {
	if p.t != nil {
		p.t.Stop()
	}
}
