package jobs

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// pollTimeout bounds every wait on another goroutine; nothing below relies
// on a sleep being long enough.
const pollTimeout = 10 * time.Second

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// anon is an anonymous client's session, the owner of most test jobs.
var anon = Owner{Session: "s1"}

func newFakeStore(t *testing.T, opts Options) (*Store, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(epoch)
	if opts.Clock == nil {
		opts.Clock = fc
	}
	s := New(opts)
	t.Cleanup(s.Close)
	return s, fc
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitWaiters waits until exactly n timers or tickers are armed on fc, i.e.
// until job goroutines have caught up with the clock.
func waitWaiters(t *testing.T, fc *clocktesting.FakeClock, n int) {
	t.Helper()
	waitFor(t, "fake clock waiters", func() bool { return fc.Waiters() == n })
}

func mustStart(t *testing.T, s *Store, steps int, interval time.Duration, token string) Snapshot {
	t.Helper()
	snap, err := s.Start(anon, steps, interval, token)
	if err != nil {
		t.Fatalf("Start(%d, %v, %q): %v", steps, interval, token, err)
	}
	return snap
}

func mustWait(t *testing.T, s *Store, jobID string) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	snap, err := s.Wait(ctx, jobID)
	if err != nil {
		t.Fatalf("Wait(%s): %v", jobID, err)
	}
	if snap.Status != StatusCompleted {
		t.Fatalf("Wait(%s) status = %q, want completed", jobID, snap.Status)
	}
	return snap
}

// runJob starts a job that needs no clock steps and waits for it.
func runJob(t *testing.T, s *Store, token string) Snapshot {
	t.Helper()
	return mustWait(t, s, mustStart(t, s, 2, 0, token).JobID)
}

func (s *Store) sizes() (jobs, tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs), len(s.tokens)
}
