package jobs

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var (
	alice = Owner{Principal: "alice", Session: "a1"}
	bob   = Owner{Principal: "bob", Session: "b1"}
)

// TestJobsBoundToPrincipal: another principal can neither read a job nor
// continue its conversation with its resume token; the same principal can,
// from any session.
func TestJobsBoundToPrincipal(t *testing.T) {
	s, _ := newFakeStore(t, Options{})
	snap, err := s.Start(alice, 1, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	done := mustWait(t, s, snap.JobID)
	if _, err := s.Get("bob", done.JobID); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("bob reads alice's job: %v", err)
	}
	if _, err := s.Get("", done.JobID); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("an anonymous client reads alice's job: %v", err)
	}
	if _, err := s.Start(bob, 1, 0, done.ResumeToken); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("bob continues alice's conversation: %v", err)
	}
	next, err := s.Start(Owner{Principal: "alice", Session: "a2"}, 1, 0, done.ResumeToken)
	if err != nil || next.ConversationID != done.ConversationID || next.Turn != 2 {
		t.Fatalf("alice from a new session: %+v %v", next, err)
	}
	if got, err := s.Get("alice", done.JobID); err != nil || got.JobID != done.JobID {
		t.Fatalf("alice reads her job: %+v %v", got, err)
	}
}

// TestPerOwnerQuota: one principal (or one anonymous session) cannot take
// every running slot; others still can start jobs.
func TestPerOwnerQuota(t *testing.T) {
	s, _ := newFakeStore(t, Options{MaxRunningPerOwner: 2})
	for _, o := range []Owner{alice, {Principal: "alice", Session: "a2"}} {
		if _, err := s.Start(o, 1, time.Second, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Start(Owner{Principal: "alice", Session: "a3"}, 1, time.Second, ""); !errors.Is(err, ErrTooMany) {
		t.Fatalf("alice's third job, from another session: %v", err)
	}
	for _, o := range []Owner{bob, {Session: "x"}, {Session: "x"}, {Session: "y"}} {
		if _, err := s.Start(o, 1, time.Second, ""); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	}
	if _, err := s.Start(Owner{Session: "x"}, 1, time.Second, ""); !errors.Is(err, ErrTooMany) {
		t.Fatalf("an anonymous session's third job: %v", err)
	}
}

// TestCancelSession: a session's end cancels its running jobs and frees
// their slots; they issue no token; other sessions' jobs run on.
func TestCancelSession(t *testing.T) {
	s, fc := newFakeStore(t, Options{MaxRunningPerOwner: 1})
	mine := mustStart(t, s, 2, time.Second, "")
	other, err := s.Start(Owner{Session: "s2"}, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	waitWaiters(t, fc, 2)
	if n := s.CancelSession(anon.Session, fc.Now()); n != 1 {
		t.Fatalf("cancelled %d jobs, want 1", n)
	}
	got, err := s.Get("", mine.JobID)
	if err != nil || got.Status != StatusCancelled || got.ResumeToken != "" || got.Result != "" {
		t.Fatalf("cancelled job: %+v %v", got, err)
	}
	waitWaiters(t, fc, 1) // its goroutine is gone
	mustStart(t, s, 1, 0, "")
	fc.Step(time.Second)
	mustWait(t, s, other.JobID)
}

// TestRetentionBound: completed jobs are kept within the per-owner and
// total bounds, oldest dropped first with their tokens.
func TestRetentionBound(t *testing.T) {
	s, _ := newFakeStore(t, Options{MaxRetainedPerOwner: 3, MaxRetained: 5})
	var done []Snapshot
	for range 4 {
		done = append(done, runJob(t, s, ""))
	}
	if _, err := s.Get("", done[0].JobID); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("oldest job beyond the per-owner bound: %v", err)
	}
	if _, err := s.Start(anon, 1, 0, done[0].ResumeToken); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("token of a dropped job: %v", err)
	}
	for i := range 3 {
		o := Owner{Session: fmt.Sprint("other", i)}
		mustWait(t, s, mustStartFor(t, s, o).JobID)
	}
	if jobs, tokens := s.sizes(); jobs != 5 || tokens != 5 {
		t.Fatalf("retained %d jobs and %d tokens, want 5", jobs, tokens)
	}
	if _, err := s.Get("", done[1].JobID); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("oldest job beyond the total bound: %v", err)
	}
	if got, err := s.Get("", done[3].JobID); err != nil || got.Status != StatusCompleted {
		t.Fatalf("newest job: %+v %v", got, err)
	}
}

func mustStartFor(t *testing.T, s *Store, o Owner) Snapshot {
	t.Helper()
	snap, err := s.Start(o, 1, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestNoIntervalCompletesAtOnce: a job with no interval has completed, with
// its token, when Start returns, so a client that ends its session right
// after job_start (a short-lived process) does not get it cancelled.
func TestNoIntervalCompletesAtOnce(t *testing.T) {
	s, fc := newFakeStore(t, Options{})
	snap := mustStart(t, s, 3, 0, "")
	if snap.Status != StatusCompleted || snap.Progress != 3 || snap.ResumeToken == "" {
		t.Fatalf("job_start with no interval returned %+v, want it completed with a token", snap)
	}
	if n := s.CancelSession(anon.Session, fc.Now()); n != 0 {
		t.Fatalf("the session's end cancelled %d jobs, want 0", n)
	}
	if got, err := s.Get("", snap.JobID); err != nil || got.Status != StatusCompleted || got.ResumeToken != snap.ResumeToken {
		t.Fatalf("after the session ended: %+v %v", got, err)
	}
}
