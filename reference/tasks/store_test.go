package tasks

import (
	"context"
	"errors"
	"fmt"
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
	a, err := s.Create("alice", "", nil, blocked)
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
	k, _ := s.Create("", "", &ttl, done)
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
	k, _ := s.Create("", "", &ttl, blocked)
	fc.Step(time.Minute)
	s.Sweep()
	if got, err := s.Get("", k.ID); err != nil || got.Status != Working {
		t.Fatalf("a working task past its ttl: %+v %v", got, err)
	}
}

func TestListPagesAndLimits(t *testing.T) {
	s, _ := newStore(t, Options{MaxPerOwner: pageSize + 5})
	for range pageSize + 5 {
		if _, err := s.Create("alice", "", nil, blocked); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create("alice", "", nil, blocked); !errors.Is(err, ErrFull) {
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
	k, _ := s.Create("", "", nil, done)
	select {
	case got := <-seen:
		if got.ID != k.ID || got.Status != Completed {
			t.Fatalf("status change: %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status change reported")
	}
}

// TestFinishedTasksLockNobodyOut: finished tasks, kept for a day, neither
// fill the store for other clients nor grow one client's share past
// MaxRetained; only running tasks are refused, per client and when every
// task held runs.
func TestFinishedTasksLockNobodyOut(t *testing.T) {
	ctx := context.Background()
	day := 24 * time.Hour
	s, _ := newStore(t, Options{MaxTasks: 10, MaxPerOwner: 4, MaxRetained: 3, MaxTTL: day})
	finish := func(owner, client string) string {
		t.Helper()
		k, err := s.Create(owner, client, &day, done)
		if err != nil {
			t.Fatalf("%s/%s: %v", owner, client, err)
		}
		if got, err := s.Result(ctx, owner, k.ID); err != nil || got.Status != Completed {
			t.Fatalf("%s: %+v %v", k.ID, got, err)
		}
		return k.ID
	}
	var alices []string
	for range 50 {
		alices = append(alices, finish("alice", ""))
	}
	if n := s.Len(); n > 3 {
		t.Fatalf("alice's 50 finished tasks left %d held, want at most MaxRetained (3)", n)
	}
	for _, id := range alices[:47] {
		if _, err := s.Get("alice", id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("alice's old task %s: %v, want dropped", id, err)
		}
	}
	for _, id := range alices[47:] {
		if _, err := s.Get("alice", id); err != nil {
			t.Fatalf("alice's recent task %s: %v", id, err)
		}
	}
	// Anonymous requestors share the owner "" but not their limits.
	for i := range 8 {
		finish("", fmt.Sprint("session-", i))
	}
	if n := s.Len(); n > 10 {
		t.Fatalf("%d tasks held, want at most MaxTasks (10)", n)
	}
	finish("bob", "")

	// Running tasks: MaxPerOwner per client, and a full store of them
	// refuses even a newcomer.
	for range 4 {
		if _, err := s.Create("carol", "", nil, blocked); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create("carol", "", nil, blocked); !errors.Is(err, ErrFull) {
		t.Fatalf("carol's fifth running task: %v, want ErrFull", err)
	}
	for _, who := range []string{"dave", "erin"} {
		for range 3 {
			if _, err := s.Create(who, "", nil, blocked); err != nil {
				t.Fatalf("%s: %v", who, err)
			}
		}
	}
	if _, err := s.Create("frank", "", nil, blocked); !errors.Is(err, ErrFull) {
		t.Fatalf("a task beside %d running ones: %v, want ErrFull", s.Len(), err)
	}
}
