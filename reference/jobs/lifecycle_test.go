package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

func TestSweepEvery(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want time.Duration
	}{
		{Options{TokenTTL: 10 * time.Minute}, 5 * time.Minute},
		{Options{TokenTTL: 10 * time.Second, JobTTL: 4 * time.Second}, 2 * time.Second},
		{Options{TokenTTL: time.Second}, time.Second},
		{Options{}, DefaultTokenTTL / 2},
	} {
		if got := New(tc.opts).sweepEvery(); got != tc.want {
			t.Errorf("sweepEvery(%+v) = %v, want %v", tc.opts, got, tc.want)
		}
	}
}

// plainClock hides FakeClock's NewTicker to exercise Run's timer fallback.
type plainClock struct{ clock.Clock }

func TestRunSweeps(t *testing.T) {
	for _, name := range []string{"ticker", "timer"} {
		t.Run(name, func(t *testing.T) {
			s, fc := newFakeStore(t, Options{TokenTTL: 10 * time.Second, JobTTL: 4 * time.Second})
			if name == "timer" {
				s.clk = plainClock{fc}
			}
			done := runJob(t, s, "")

			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				s.Run(ctx)
			}()

			waitWaiters(t, fc, 1)
			fc.Step(4 * time.Second)
			waitFor(t, "job sweep", func() bool { jobs, _ := s.sizes(); return jobs == 0 })
			if _, tokens := s.sizes(); tokens != 1 {
				t.Fatalf("token swept before its TTL")
			}
			if _, err := s.Get("", done.JobID); !errors.Is(err, ErrUnknownJob) {
				t.Fatalf("err = %v", err)
			}

			waitWaiters(t, fc, 1)
			fc.Step(6 * time.Second)
			waitFor(t, "token sweep", func() bool { _, tokens := s.sizes(); return tokens == 0 })

			cancel()
			select {
			case <-stopped:
			case <-time.After(pollTimeout):
				t.Fatal("Run did not return after cancel")
			}
		})
	}
}

func TestCloseStopsGoroutines(t *testing.T) {
	baseline := runtime.NumGoroutine()

	s, fc := newFakeStore(t, Options{})
	const n = 20
	var first Snapshot
	for i := range n {
		snap, err := s.Start(Owner{Session: fmt.Sprint(i)}, 60, MaxInterval, "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = snap
		}
	}
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		s.Run(context.Background())
	}()
	waitErr := make(chan error, 1)
	go func() {
		_, err := s.Wait(context.Background(), first.JobID)
		waitErr <- err
	}()
	waitWaiters(t, fc, n+1) // every job's timer plus Run's ticker

	s.Close()
	s.Close() // idempotent

	select {
	case <-runDone:
	case <-time.After(pollTimeout):
		t.Fatal("Run did not return after Close")
	}
	select {
	case err := <-waitErr:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Wait err = %v, want ErrClosed", err)
		}
	case <-time.After(pollTimeout):
		t.Fatal("Wait did not return after Close")
	}
	// FakeClock tickers cannot be stopped, so only Run's ticker may remain.
	if got := fc.Waiters(); got != 1 {
		t.Fatalf("waiters after Close = %d, want 1", got)
	}
	waitFor(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= baseline })

	if _, err := s.Start(anon, 1, 0, ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: err = %v", err)
	}
	if got, err := s.Get("", first.JobID); err != nil || got.Status != StatusRunning {
		t.Fatalf("interrupted job = %+v, %v", got, err)
	}
}
