package serverchecks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// withProxy gives tc a fault proxy server, as a run without --no-proxy has.
func withProxy(t *testing.T, tc *Target) *Target {
	tc.Faults = toxics.NewServer()
	t.Cleanup(func() { tc.Faults.Close() })
	return tc
}

// TestObserveBaseline: one undisturbed call of the reference's
// long_operation delivers its 5 notifications and its result; against a
// server that drops the last of every call it delivers 4 and says so.
func TestObserveBaseline(t *testing.T) {
	for _, tc := range []struct {
		fixture   string
		delivered int
		short     string
	}{
		{"", 5, ""},
		{"last-progress-dropped", 4, "an undisturbed call of long_operation delivered 4 of the 5 declared notifications (progress 1 2 3 4)"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			b := ObserveBaseline(context.Background(), hosted(t, tc.fixture, "2025-11-25", nil))
			if b == nil || b.Unobserved != "" {
				t.Fatalf("no baseline observed: %+v", b)
			}
			if b.Delivered != tc.delivered || b.OnPOST != tc.delivered || !b.Answered || b.Error != "" || b.Shortfall() != tc.short {
				t.Fatalf("baseline %s; shortfall %q, want %d delivered on the POST stream, answered, shortfall %q", b, b.Shortfall(), tc.delivered, tc.short)
			}
			// 5 notifications 200 ms apart: about a second, each gap about 200 ms.
			if b.Took < 800*time.Millisecond || b.Gap < 150*time.Millisecond || !strings.Contains(b.Exchange, "tools/call") {
				t.Fatalf("took %v, gaps up to %v, want about 1s and 200ms, and the call in the exchange:\n%s", b.Took, b.Gap, b.Exchange)
			}
		})
	}
}

// TestShortfall: what a baseline says about itself, and the bound it
// puts on the checks' waits.
func TestShortfall(t *testing.T) {
	cfg := &target.Profile{Tools: target.Tools{Notifying: &target.NotifyingTool{Notifications: 5, Interval: target.Duration(200 * time.Millisecond)}}}
	base := Baseline{Tool: "t", Declared: 5, Delivered: 5, Answered: true, Took: time.Second}
	for _, tc := range []struct {
		name   string
		change func(*Baseline)
		want   string
		bound  time.Duration
	}{
		{"as declared", func(*Baseline) {}, "", 5*time.Second + 800*time.Millisecond},
		{"fewer", func(b *Baseline) { b.Delivered, b.Progress = 4, "1 2 3 4" }, "an undisturbed call of t delivered 4 of the 5 declared notifications (progress 1 2 3 4)", 5*time.Second + 800*time.Millisecond},
		{"more", func(b *Baseline) { b.Delivered = 6 }, "an undisturbed call of t delivered 6 notifications, 5 declared", 5*time.Second + 800*time.Millisecond},
		{"error", func(b *Baseline) { b.Delivered, b.Error = 2, "JSON-RPC error -32603: boom" }, "an undisturbed call of t ended with JSON-RPC error -32603: boom after 2 of the 5 declared notifications", 5*time.Second + 800*time.Millisecond},
		{"no response", func(b *Baseline) { b.Answered, b.Took = false, 12*time.Second }, "an undisturbed call of t delivered 5 of the 5 declared notifications and no response within 12s", 27*time.Second + 800*time.Millisecond},
		{"ended", func(b *Baseline) { b.Answered, b.Ended = false, true }, "an undisturbed call of t delivered 5 of the 5 declared notifications, then its POST stream ended without a response", 5*time.Second + 800*time.Millisecond},
		{"unobserved", func(b *Baseline) { b.Delivered, b.Unobserved = 0, "JSON" }, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			tc.change(&b)
			if got := b.Shortfall(); got != tc.want {
				t.Errorf("shortfall %q, want %q", got, tc.want)
			}
			if got := b.bound(cfg); got != tc.bound {
				t.Errorf("bound %v, want %v", got, tc.bound)
			}
		})
	}
	if got := (*Baseline)(nil).Shortfall(); got != "" {
		t.Errorf("no baseline: shortfall %q", got)
	}
}

// TestCountJudgedAgainstBaseline: when the undisturbed call delivered 4
// of 5, a check's streams carrying those 4, once each and in order, pass;
// fewer are inconclusive, naming that call's shortfall; a duplicate, or a
// call the fault ended with an error, still fails; and without that
// shortfall 4 of 5 fails as before.
func TestCountJudgedAgainstBaseline(t *testing.T) {
	cfg := &target.Profile{Tools: target.Tools{Notifying: &target.NotifyingTool{
		Tool: target.Tool{Name: "long_operation"}, Method: "notifications/progress", Notifications: 5}}}
	short := &Baseline{Tool: "long_operation", Declared: 5, Delivered: 4, OnPOST: 4, Progress: "1 2 3 4", Answered: true, Took: time.Second}
	const says = "an undisturbed call of long_operation delivered 4 of the 5 declared notifications"
	for _, tc := range []struct {
		name      string
		baseline  *Baseline
		post, get []int
		cancelled bool
		state     kit.State
		message   string
	}{
		{"as many as undisturbed", short, []int{1, 2}, []int{3, 4}, false, kit.Passed, ""},
		{"fewer than undisturbed", short, []int{1, 2}, []int{3}, false, kit.Inconclusive, says + " (progress 1 2 3 4), so this call's 3 cannot be judged"},
		{"twice", short, []int{1, 2, 3, 4}, []int{2}, false, kit.Failed, "notification delivered twice"},
		{"cancelled by the fault", short, []int{1}, nil, true, kit.Failed, "got 1 of 5; the call ended with JSON-RPC error -32603"},
		{"no shortfall", &Baseline{Tool: "long_operation", Declared: 5, Delivered: 5, Answered: true, Took: time.Second}, []int{1, 2}, []int{3, 4}, false, kit.Failed, "got 4 of 5"},
		{"no baseline", nil, []int{1, 2}, []int{3, 4}, false, kit.Failed, "got 4 of 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kit.Check{Entry: mustLookup("MSG-ONE-STREAM"), Run: func(k *kit.T) {
				e := &env{T: k, Config: cfg, target: &Target{Config: cfg, Baseline: tc.baseline}}
				get := notesOn(k, "GET", tc.get...)
				if tc.cancelled {
					get.events = append(get.events, sse.Event{Data: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}`})
				}
				e.expectDelivered(&call{token: "tok", id: "7"}, notesOn(k, "POST", tc.post...), get)
			}}
			r := kit.Execute(context.Background(), c, 5*time.Second)
			if r.State != tc.state || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("%v %q, want %v with %q", r.State, r.Message, tc.state, tc.message)
			}
		})
	}
}

// TestBroadcastCheckIgnoresLosses: against a server whose every call
// loses its last notification, MSG-ONE-STREAM (about broadcasting) passes,
// with or without the undisturbed call's baseline: it judges where the
// call's notifications went, not how many came (TestCountJudgedAgainstBaseline
// has the count judged against the baseline).
func TestBroadcastCheckIgnoresLosses(t *testing.T) {
	t.Parallel()
	tc := withProxy(t, hosted(t, "last-progress-dropped", "2025-11-25", nil))
	c := checkOf(t, tc, "MSG-ONE-STREAM")
	if r := kit.Execute(context.Background(), c, c.Deadline(testMargin)); r.State != kit.Passed {
		t.Fatalf("without a baseline: %v %q, want a pass: a lost notification is no broadcast", r.State, r.Message)
	}
	tc.Baseline = ObserveBaseline(context.Background(), tc)
	if r := kit.Execute(context.Background(), c, c.Deadline(testMargin)); r.State != kit.Passed {
		t.Fatalf("with the baseline: %v %q, want a pass", r.State, r.Message)
	}
}

// TestNotCancelResumesTwice: a server whose first resume from an id
// loses the response, which a second resume from the same id carries,
// did not cancel the call: DISCONNECT-NOT-CANCEL passes, saying the
// first resume lost the response.
func TestNotCancelResumesTwice(t *testing.T) {
	t.Parallel()
	tc := withProxy(t, hosted(t, "first-resume-loses-response", "2025-11-25", nil))
	tc.Baseline = ObserveBaseline(context.Background(), tc)
	c := checkOf(t, tc, "DISCONNECT-NOT-CANCEL")
	r := kit.Execute(context.Background(), c, c.Deadline(testMargin))
	if r.State != kit.Passed || !strings.Contains(r.Exchange, "lost the call's response and the second carried it: the call was not cancelled") {
		t.Fatalf("%v %q, want a pass that says the first resume lost the response\n%s", r.State, r.Message, r.Exchange)
	}
}

// TestWaitsBoundedByBaseline: against a server that drops a cut call's
// later notifications, REPLAY-GAP's wait for them ends at twice what the
// undisturbed call took plus two quiet windows and the busy-machine
// slack (about 6 s), not at the check's deadline, and its failure says
// what bounded it.
func TestWaitsBoundedByBaseline(t *testing.T) {
	t.Parallel()
	tc := withProxy(t, hosted(t, "orphaned-notifications-dropped", "2025-11-25", nil))
	tc.Baseline = ObserveBaseline(context.Background(), tc)
	if tc.Baseline.Shortfall() != "" {
		t.Fatalf("the undisturbed call fell short: %s", tc.Baseline)
	}
	c := checkOf(t, tc, "REPLAY-GAP")
	// A deadline far beyond the bound: a wait that ran to the deadline
	// rather than to the bound is then told apart by tens of seconds, which
	// no busy machine's delays approach.
	bound := tc.Baseline.bound(tc.Config)
	deadline := c.Deadline(testMargin + 40*time.Second)
	r := kit.Execute(context.Background(), c, deadline)
	if r.State != kit.Failed || !strings.HasPrefix(r.Message, "waited ") || !strings.Contains(r.Message, "an undisturbed call took, plus two quiet windows and 3s for a busy machine), in vain") {
		t.Fatalf("%v %q, want a failed wait that says what bounded it", r.State, r.Message)
	}
	if r.Took > bound+20*time.Second {
		t.Fatalf("the check took %v: its wait ran past the undisturbed call's bound (%v) towards the deadline (%v)", r.Took, bound, deadline)
	}
}
