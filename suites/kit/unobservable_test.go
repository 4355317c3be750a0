package kit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	. "github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestUnobservableEndsInconclusive: when the run's context is cancelled
// because the harness can no longer observe anything (the target stopped
// answering), a check that was waiting ends at once, inconclusive, with
// the cause, however it was waiting: a wait, a pause, a body that
// returned early, a body that ignores its context. Its cleanups get a
// context that has ended already, so they cannot wait on the target.
func TestUnobservableEndsInconclusive(t *testing.T) {
	cause := &Unobservable{Err: errors.New("the target stopped answering: no answer to ping within 2s, 3 times, at 12:00:00")}
	for _, tc := range []struct {
		name string
		body func(*T)
	}{
		{"eventually", func(k *T) { k.Eventually(func() bool { return false }).Should(BeTrue(), "the awaited event") }},
		{"pause", func(k *T) { k.Pause(time.Hour) }},
		{"returned", func(k *T) { <-k.Context().Done() }},
		{"failed", func(k *T) { <-k.Context().Done(); k.Fail("HTTP request: context canceled") }},
		{"inconclusive", func(k *T) {
			<-k.Context().Done()
			k.Inconclusive("the check's deadline passed in the harness's own setup")
		}},
		{"ignores its context", func(k *T) { select {} }},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var cleanupCtx error
		body := func(k *T) {
			k.Cleanup(func(ctx context.Context) { cleanupCtx = ctx.Err() })
			tc.body(k)
		}
		began := time.Now()
		done := make(chan Result, 1)
		go func() { done <- Execute(ctx, Check{Entry: catalogue.Entry{ID: "X-TEST"}, Run: body}, time.Minute) }()
		cancel(cause)
		r := <-done
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("%s: took %v after the cancel; want it at once", tc.name, took)
		}
		if r.State != Inconclusive || !strings.HasPrefix(r.Message, "the target stopped answering") {
			t.Errorf("%s: %v %q; want inconclusive naming the cause", tc.name, r.State, r.Message)
		}
		if tc.name != "ignores its context" && cleanupCtx == nil {
			t.Errorf("%s: the cleanup got a live context", tc.name)
		}
	}
}

// TestOtherCancelFails: a run interrupted for another cause (Ctrl-C, the
// run's timeout) still fails the check that was waiting, as before.
func TestOtherCancelFails(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by the user"))
	r := Execute(ctx, Check{Entry: catalogue.Entry{ID: "X-TEST"}, Run: func(k *T) { k.Pause(time.Hour) }}, time.Minute)
	if r.State != Failed {
		t.Errorf("%v %q; want failed", r.State, r.Message)
	}
}
