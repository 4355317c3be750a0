package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStartProgressComplete(t *testing.T) {
	s, fc := newFakeStore(t, Options{TokenTTL: time.Hour})

	snap := mustStart(t, s, 3, time.Second, "")
	if snap.Status != StatusRunning || snap.Progress != 0 || snap.Steps != 3 || snap.Turn != 1 {
		t.Fatalf("initial snapshot = %+v", snap)
	}
	if snap.JobID == "" || snap.ConversationID == "" || snap.Result != "" || snap.ResumeToken != "" {
		t.Fatalf("initial snapshot = %+v", snap)
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if js := string(raw); strings.Contains(js, "result") || strings.Contains(js, "resume_token") || !strings.Contains(js, `"conversation_id"`) {
		t.Fatalf("running job JSON = %s", js)
	}

	for want := 1; want < 3; want++ {
		waitWaiters(t, fc, 1)
		fc.Step(999 * time.Millisecond) // not yet due
		fc.Step(time.Millisecond)
		waitWaiters(t, fc, 1) // rearmed after recording the step
		got, err := s.Get("", snap.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Progress != want || got.Status != StatusRunning || got.ResumeToken != "" {
			t.Fatalf("after step %d: %+v", want, got)
		}
	}
	fc.Step(time.Second)
	done := mustWait(t, s, snap.JobID)

	wantResult := fmt.Sprintf("conversation %s turn 1: completed 3 steps", snap.ConversationID)
	if done.Result != wantResult || done.Progress != 3 {
		t.Fatalf("completed = %+v, want result %q", done, wantResult)
	}
	if len(done.ResumeToken) < 26 { // crypto/rand.Text: 26 base32 chars, 130 bits
		t.Fatalf("resume token %q too short", done.ResumeToken)
	}
	if got, err := s.Get("", snap.JobID); err != nil || got != done {
		t.Fatalf("Get after completion = %+v, %v; want %+v", got, err, done)
	}
	if fc.HasWaiters() {
		t.Fatal("completed job left a timer armed")
	}
}

func TestResumeContinuesConversation(t *testing.T) {
	s, _ := newFakeStore(t, Options{TokenTTL: time.Hour})

	first := runJob(t, s, "")
	second := runJob(t, s, first.ResumeToken)
	third := runJob(t, s, second.ResumeToken)

	for i, snap := range []Snapshot{first, second, third} {
		if snap.ConversationID != first.ConversationID {
			t.Fatalf("turn %d conversation = %s, want %s", i+1, snap.ConversationID, first.ConversationID)
		}
		if snap.Turn != i+1 {
			t.Fatalf("job %d turn = %d", i+1, snap.Turn)
		}
		want := fmt.Sprintf("conversation %s turn %d: completed 2 steps", first.ConversationID, i+1)
		if snap.Result != want {
			t.Fatalf("result = %q, want %q", snap.Result, want)
		}
	}
	if first.ResumeToken == second.ResumeToken || second.ResumeToken == third.ResumeToken {
		t.Fatal("each completed job must get a fresh token")
	}
	if first.JobID == second.JobID || second.JobID == third.JobID {
		t.Fatal("job ids repeated")
	}
	if other := runJob(t, s, ""); other.ConversationID == first.ConversationID || other.Turn != 1 {
		t.Fatalf("new conversation = %+v", other)
	}
}

func TestTokenReuse(t *testing.T) {
	s, _ := newFakeStore(t, Options{TokenTTL: time.Hour})
	first := runJob(t, s, "")

	// A retried resume gets the same turn again rather than failing.
	a := runJob(t, s, first.ResumeToken)
	b := runJob(t, s, first.ResumeToken)
	if a.Turn != 2 || b.Turn != 2 || a.ConversationID != first.ConversationID || b.ConversationID != first.ConversationID {
		t.Fatalf("reused token: %+v / %+v", a, b)
	}
	if a.JobID == b.JobID {
		t.Fatal("reuse must start a distinct job")
	}

	// A newer token does not revoke the older one.
	c := runJob(t, s, a.ResumeToken)
	if c.Turn != 3 {
		t.Fatalf("turn = %d, want 3", c.Turn)
	}
	if d := runJob(t, s, first.ResumeToken); d.Turn != 2 {
		t.Fatalf("old token after newer issued: turn = %d, want 2", d.Turn)
	}
}

func TestTokenExpiry(t *testing.T) {
	const ttl = 10 * time.Minute
	s, fc := newFakeStore(t, Options{TokenTTL: ttl, JobTTL: time.Hour})
	first := runJob(t, s, "")

	fc.Step(ttl - time.Nanosecond)
	second := runJob(t, s, first.ResumeToken) // still valid
	fc.Step(time.Nanosecond)

	_, err := s.Start(anon, 1, 0, first.ResumeToken)
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("expired token before sweep: err = %v, want ErrInvalidToken", err)
	}
	if _, tokens := s.sizes(); tokens != 2 {
		t.Fatalf("tokens before sweep = %d, want 2", tokens)
	}
	s.Sweep()
	if _, tokens := s.sizes(); tokens != 1 {
		t.Fatalf("tokens after sweep = %d, want 1 (only the newer one)", tokens)
	}
	if _, err := s.Start(anon, 1, 0, first.ResumeToken); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("swept token: err = %v, want ErrInvalidToken", err)
	}
	// The newer token was issued later, so it has its own full TTL.
	if third := runJob(t, s, second.ResumeToken); third.Turn != 3 {
		t.Fatalf("turn = %d, want 3", third.Turn)
	}
}

func TestUnknownToken(t *testing.T) {
	s, _ := newFakeStore(t, Options{})
	_, err := s.Start(anon, 1, 0, "not-a-token")
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("err = %v, want ErrInvalidToken", err)
	}
	if err.Error() != "jobs: resume token is unknown or expired" {
		t.Fatalf("message = %q", err)
	}
	if jobs, _ := s.sizes(); jobs != 0 {
		t.Fatalf("rejected start created %d jobs", jobs)
	}
}

func TestBadArgs(t *testing.T) {
	s, _ := newFakeStore(t, Options{})
	for _, tc := range []struct {
		steps    int
		interval time.Duration
		detail   string
	}{
		{0, 0, "steps"},
		{-1, time.Second, "steps"},
		{MaxSteps + 1, time.Second, "steps"},
		{1, -time.Nanosecond, "interval"},
		{1, MaxInterval + time.Nanosecond, "interval"},
		{MaxSteps, MaxInterval, "at most 1h0m0s"},
	} {
		_, err := s.Start(anon, tc.steps, tc.interval, "")
		if !errors.Is(err, ErrBadArgs) || !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("Start(%d, %v) err = %v, want ErrBadArgs about %s", tc.steps, tc.interval, err, tc.detail)
		}
	}
	if jobs, _ := s.sizes(); jobs != 0 {
		t.Fatalf("rejected starts created %d jobs", jobs)
	}
	// Bounds are inclusive.
	mustStart(t, s, 1, 0, "")
	mustStart(t, s, MaxSteps, 0, "")
	mustStart(t, s, int(MaxDuration/MaxInterval), MaxInterval, "")
}

func TestJobRetentionAndSweep(t *testing.T) {
	t.Run("defaults to token TTL", func(t *testing.T) {
		const ttl = 10 * time.Minute
		s, fc := newFakeStore(t, Options{TokenTTL: ttl})
		if s.jobTTL != ttl {
			t.Fatalf("jobTTL = %v, want %v", s.jobTTL, ttl)
		}
		done := runJob(t, s, "")

		fc.Step(ttl - time.Nanosecond)
		s.Sweep()
		if got, err := s.Get("", done.JobID); err != nil || got != done {
			t.Fatalf("within retention: %+v, %v", got, err)
		}
		fc.Step(time.Nanosecond)
		if _, err := s.Get("", done.JobID); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("past retention: err = %v, want ErrUnknownJob", err)
		}
		s.Sweep()
		if jobs, _ := s.sizes(); jobs != 0 {
			t.Fatalf("jobs after sweep = %d", jobs)
		}
		if _, err := s.Get("", done.JobID); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("swept: err = %v", err)
		}
		if _, err := s.Wait(context.Background(), done.JobID); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("Wait on swept job: err = %v", err)
		}
	})

	t.Run("shorter than token TTL", func(t *testing.T) {
		s, fc := newFakeStore(t, Options{TokenTTL: time.Hour, JobTTL: time.Minute})
		done := runJob(t, s, "")
		fc.Step(time.Minute)
		s.Sweep()
		if _, err := s.Get("", done.JobID); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("err = %v, want ErrUnknownJob", err)
		}
		// The conversation outlives the job record.
		if next := runJob(t, s, done.ResumeToken); next.Turn != 2 {
			t.Fatalf("turn = %d", next.Turn)
		}
	})

	t.Run("running jobs are kept", func(t *testing.T) {
		s, fc := newFakeStore(t, Options{TokenTTL: time.Minute})
		snap := mustStart(t, s, 2, time.Second, "")
		waitWaiters(t, fc, 1)
		fc.Step(time.Hour)
		waitWaiters(t, fc, 1)
		s.Sweep()
		got, err := s.Get("", snap.JobID)
		if err != nil || got.Status != StatusRunning || got.Progress != 1 {
			t.Fatalf("running job after sweep: %+v, %v", got, err)
		}
	})

	t.Run("unknown id", func(t *testing.T) {
		s, _ := newFakeStore(t, Options{})
		if _, err := s.Get("", "nope"); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestMaxRunning(t *testing.T) {
	if got := New(Options{}).maxRunning; got != DefaultMaxRunning {
		t.Fatalf("default MaxRunning = %d", got)
	}
	s, fc := newFakeStore(t, Options{MaxRunning: 2})
	a := mustStart(t, s, 1, time.Second, "")
	b := mustStart(t, s, 1, time.Second, "")
	if _, err := s.Start(anon, 1, time.Second, ""); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third start: err = %v, want ErrTooMany", err)
	}
	waitWaiters(t, fc, 2)
	fc.Step(time.Second)
	mustWait(t, s, a.JobID)
	done := mustWait(t, s, b.JobID)

	// Completed jobs free their slots, including for resumes.
	mustStart(t, s, 1, time.Second, "")
	mustStart(t, s, 1, time.Second, done.ResumeToken)
	if _, err := s.Start(anon, 1, 0, done.ResumeToken); !errors.Is(err, ErrTooMany) {
		t.Fatalf("resume at limit: err = %v, want ErrTooMany", err)
	}
}

func TestWaitContextCancel(t *testing.T) {
	s, fc := newFakeStore(t, Options{})
	snap := mustStart(t, s, 1, time.Second, "")

	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		snap Snapshot
		err  error
	}
	res := make(chan result, 1)
	go func() {
		got, err := s.Wait(ctx, snap.JobID)
		res <- result{got, err}
	}()
	cancel()
	select {
	case r := <-res:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", r.err)
		}
		if r.snap.JobID != snap.JobID || r.snap.Status != StatusRunning {
			t.Fatalf("snapshot on cancel = %+v", r.snap)
		}
	case <-time.After(pollTimeout):
		t.Fatal("Wait did not return after cancel")
	}

	// Cancelling a waiter does not affect the job.
	waitWaiters(t, fc, 1)
	fc.Step(time.Second)
	mustWait(t, s, snap.JobID)

	if _, err := s.Wait(context.Background(), "nope"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("unknown job: err = %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	s, fc := newFakeStore(t, Options{TokenTTL: time.Hour})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				// Far too small a step to expire anything within the test.
				s.Sweep()
				fc.Step(time.Microsecond)
				runtime.Gosched()
			}
		}
	}()
	for i := range 8 {
		owner := Owner{Session: fmt.Sprint(i)}
		wg.Go(func() {
			for range 25 {
				first, err := s.Start(owner, 3, 0, "")
				if err != nil {
					t.Error(err)
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
				done, err := s.Wait(ctx, first.JobID)
				cancel()
				if err != nil {
					t.Error(err)
					return
				}
				next, err := s.Start(owner, 1, 0, done.ResumeToken)
				if err != nil {
					t.Error(err)
					return
				}
				if next.Turn != 2 || next.ConversationID != first.ConversationID {
					t.Errorf("resume = %+v", next)
				}
				if _, err := s.Get("", next.JobID); err != nil {
					t.Error(err)
				}
				// Finished before the next turn, so the owner's running
				// jobs stay under the per-client limit at any speed.
				ctx, cancel = context.WithTimeout(context.Background(), pollTimeout)
				_, err = s.Wait(ctx, next.JobID)
				cancel()
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
}
