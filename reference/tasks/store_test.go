package tasks

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func newStore(t *testing.T, opts Options) (*Store, *clocktesting.FakeClock) {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Clock = fc
	s := New(opts)
	t.Cleanup(s.Close)
	return s, fc
}

// done returns at once with a result.
func done(context.Context) Outcome { return Outcome{Result: []byte(`{"ok":true}`)} }

// blocked works until cancelled.
func blocked(ctx context.Context) Outcome {
	<-ctx.Done()
	return Outcome{Error: &Error{Code: -32603, Message: ctx.Err().Error()}}
}

func TestOwnersAndIDs(t *testing.T) {
	s, _ := newStore(t, Options{})
	a, err := s.Create("alice", nil, blocked)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.ID) != 26 || a.Status != Working || a.TTL != DefaultTTL || a.PollInterval != DefaultPollInterval {
		t.Fatalf("created: %+v", a)
	}
	for _, f := range []func() error{
		func() error { _, err := s.Get("bob", a.ID); return err },
		func() error { _, err := s.Cancel("bob", a.ID); return err },
		func() error { _, err := s.Result(context.Background(), "bob", a.ID); return err },
	} {
		if err := f(); !errors.Is(err, ErrNotFound) {
			t.Fatalf("another owner: %v", err)
		}
	}
	if page, _, _ := s.List("bob", ""); len(page) != 0 {
		t.Fatalf("bob lists %d tasks", len(page))
	}
	if got, err := s.Cancel("alice", a.ID); err != nil || got.Status != Cancelled {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	if _, err := s.Cancel("alice", a.ID); !errors.Is(err, ErrTerminal) {
		t.Fatalf("second cancel: %v", err)
	}
}

func TestResultRepeatsAndExpires(t *testing.T) {
	s, fc := newStore(t, Options{})
	ttl := 10 * time.Second
	k, _ := s.Create("", &ttl, done)
	for range 2 {
		got, err := s.Result(context.Background(), "", k.ID)
		if err != nil || got.Status != Completed || string(got.Outcome.Result) != `{"ok":true}` {
			t.Fatalf("result: %+v %v", got, err)
		}
	}
	fc.Step(9 * time.Second)
	if _, err := s.Get("", k.ID); err != nil {
		t.Fatalf("within ttl: %v", err)
	}
	fc.Step(time.Second)
	if _, err := s.Get("", k.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after ttl: %v", err)
	}
	s.Sweep()
	if s.Len() != 0 {
		t.Fatalf("%d tasks after the sweep", s.Len())
	}
}

func TestRunningTaskOutlivesTTL(t *testing.T) {
	s, fc := newStore(t, Options{})
	ttl := time.Second
	k, _ := s.Create("", &ttl, blocked)
	fc.Step(time.Minute)
	s.Sweep()
	if got, err := s.Get("", k.ID); err != nil || got.Status != Working {
		t.Fatalf("a working task past its ttl: %+v %v", got, err)
	}
}

func TestListPagesAndLimits(t *testing.T) {
	s, _ := newStore(t, Options{MaxPerOwner: pageSize + 5})
	for range pageSize + 5 {
		if _, err := s.Create("alice", nil, blocked); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create("alice", nil, blocked); !errors.Is(err, ErrFull) {
		t.Fatalf("over the per-owner limit: %v", err)
	}
	page, next, err := s.List("alice", "")
	if err != nil || len(page) != pageSize || next == "" {
		t.Fatalf("first page: %d tasks, next %q, %v", len(page), next, err)
	}
	rest, last, err := s.List("alice", next)
	if err != nil || len(rest) != 5 || last != "" {
		t.Fatalf("second page: %d tasks, next %q, %v", len(rest), last, err)
	}
	if _, _, err := s.List("alice", "bogus"); err == nil {
		t.Fatal("a bogus cursor was accepted")
	}
}

func TestStatusCallback(t *testing.T) {
	seen := make(chan Snapshot, 1)
	s, _ := newStore(t, Options{OnStatus: func(k Snapshot) { seen <- k }})
	k, _ := s.Create("", nil, done)
	select {
	case got := <-seen:
		if got.ID != k.ID || got.Status != Completed {
			t.Fatalf("status change: %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status change reported")
	}
}
