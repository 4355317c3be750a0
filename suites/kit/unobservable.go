package kit

import (
	"context"
	"errors"
	"time"
)

// Unobservable is the cause a run's context is cancelled with when the
// harness can no longer observe anything of the target (it stopped
// answering). A check it ends is inconclusive, whatever it was waiting
// for, with this cause as its message: what the check would have seen
// cannot be told from a target that answers nothing.
type Unobservable struct{ Err error }

func (u *Unobservable) Error() string { return u.Err.Error() }
func (u *Unobservable) Unwrap() error { return u.Err }

// unobservable returns the cause if ctx ended because nothing could be
// observed any more, else nil.
func unobservable(ctx context.Context) *Unobservable {
	if ctx.Err() == nil {
		return nil
	}
	var u *Unobservable
	if errors.As(context.Cause(ctx), &u) {
		return u
	}
	return nil
}

// leaveGrace is how long a check whose run ended as Unobservable may take
// to notice before the runner leaves it behind.
const leaveGrace = 2 * time.Second
