package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// fastFail bounds an operation on a store already known to be down: it
// fails without a round trip, where one that tried would wait for
// opTimeout (5 s). The margin is a busy machine's, under -race.
const fastFail = time.Second

// timed runs op and returns its error and how long it took.
func timed(op func() error) (error, time.Duration) {
	start := time.Now()
	err := op()
	return err, time.Since(start)
}

// awaitUp waits until the store has come back (a probe answered) and
// returns how long that took.
func awaitUp(t *testing.T, s *Store, recovered <-chan struct{}) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-recovered:
	case <-time.After(10 * time.Second):
		t.Fatal("the store did not come back within 10 s of Redis")
	}
	if down, back := s.Outage(); down || back.IsZero() {
		t.Fatalf("after recovery: down %v, back %v", down, back)
	}
	return time.Since(start)
}

// TestOutage: with Redis killed or stopped, every operation fails with
// store.ErrUnavailable, the first within opTimeout and the others at once;
// once Redis answers again the store recovers by itself, says so, and
// what Redis kept is there.
func TestOutage(t *testing.T) {
	rs := redistest.StartWith(t, redistest.Options{Persist: true})
	s, err := New(context.Background(), Options{URL: rs.URL(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if err := s.Create(ctx, store.Session{ID: "A", Principal: "p"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	recovered := make(chan struct{}, 4)
	cancel := s.OnRecover(func() { recovered <- struct{}{} })
	defer cancel()
	load := func() error { _, _, err := s.Load(ctx, "A"); return err }

	rs.Kill()
	err, took := timed(load)
	if !errors.Is(err, store.ErrUnavailable) || took > opTimeout {
		t.Fatalf("Load with Redis killed: %v after %v; want ErrUnavailable within %v", err, took, opTimeout)
	}
	if down, _ := s.Outage(); !down {
		t.Fatal("Outage does not report the store down")
	}
	for _, op := range []func() error{load, func() error { _, err := s.Touch(ctx, "A", time.Now()); return err },
		func() error { return s.Events().Append(ctx, "A", "s", []byte("x")) },
		func() error { _, err := s.Follow(ctx, "A", ""); return err }} {
		if err, took := timed(op); !errors.Is(err, store.ErrUnavailable) || took > fastFail {
			t.Fatalf("operation on a store known down: %v after %v; want ErrUnavailable within %v", err, took, fastFail)
		}
	}
	if err := rs.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed: first failure after %v; back %v after the restart", took, awaitUp(t, s, recovered))
	if rec, ok, err := s.Load(ctx, "A"); err != nil || !ok || rec.Principal != "p" {
		t.Fatalf("Load after the restart: %+v %v %v", rec, ok, err)
	}

	if err := rs.Pause(); err != nil {
		t.Fatal(err)
	}
	err, took = timed(load)
	if !errors.Is(err, store.ErrUnavailable) || took > opTimeout+time.Second {
		t.Fatalf("Load with Redis stopped: %v after %v; want ErrUnavailable within %v", err, took, opTimeout)
	}
	if err, took := timed(load); !errors.Is(err, store.ErrUnavailable) || took > fastFail {
		t.Fatalf("second Load with Redis stopped: %v after %v", err, took)
	}
	if err := rs.Resume(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped: first failure after %v; back %v after SIGCONT", took, awaitUp(t, s, recovered))
	if _, ok, err := s.Load(ctx, "A"); err != nil || !ok {
		t.Fatalf("Load after SIGCONT: %v %v", ok, err)
	}
}

// TestAnsweredErrorsLeaveItUp: an error Redis answers (a missing session,
// a wrong type) says nothing of its reachability.
func TestAnsweredErrorsLeaveItUp(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	if _, err := s.Increment(ctx, "nobody"); !errors.Is(err, store.ErrGone) {
		t.Fatalf("Increment of an unknown id: %v", err)
	}
	s.rdb.Set(ctx, s.sessKey("X"), "a string", 0)
	if _, _, err := s.Load(ctx, "X"); err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Load of a key of the wrong type: %v, want Redis's error", err)
	}
	if down, _ := s.Outage(); down {
		t.Fatal("answered errors marked the store down")
	}
}
