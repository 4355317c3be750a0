package kit_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	. "github.com/mcp-conform/mcp-conform/suites/kit"
)

func run(t *testing.T, d time.Duration, body func(*T)) Result {
	t.Helper()
	return Execute(context.Background(), Check{Entry: catalogue.Entry{ID: "X-TEST"}, Run: body}, d)
}

func TestExecuteStates(t *testing.T) {
	cleaned := 0
	for _, tc := range []struct {
		name  string
		body  func(*T)
		state State
		msg   string
	}{
		{"pass", func(*T) {}, Passed, ""},
		{"assertion", func(k *T) { k.Expect(1).To(Equal(2), "one is not two") }, Failed, "one is not two"},
		{"fail", func(k *T) { k.Failf("broken %d", 7) }, Failed, "broken 7"},
		{"skip", func(k *T) { k.Skip(report.NotOffered, "not applicable: no GET") }, Skipped, "not applicable: no GET"},
		{"panic", func(*T) { panic("boom") }, Failed, "panic: boom"},
		{"eventually", func(k *T) { k.Eventually(func() bool { return false }).Should(BeTrue(), "the awaited event") }, Failed, "for the awaited event, in vain"},
		{"pause past deadline", func(k *T) { k.Pause(time.Hour) }, Failed, "deadline passed"},
		{"diagnosed", func(k *T) {
			k.Diagnose(func(context.Context) string { return "" })
			k.Diagnose(func(context.Context) string { return "the session expired during the check" })
			k.Fail("400 Unknown Last-Event-ID")
		}, Failed, "the session expired during the check\n400 Unknown Last-Event-ID"},
		{"skip diagnosed", func(k *T) {
			k.Diagnose(func(context.Context) string { return "the session expired during the check" })
			k.Skip(report.NotOffered, "the target does not resume streams")
		}, Failed, "the session expired during the check\nthe check would have been skipped: the target does not resume streams"},
		{"skip without a cause", func(k *T) {
			k.Diagnose(func(context.Context) string { return "" })
			k.Skip(report.NotOffered, "no GET stream")
		}, Skipped, "no GET stream"},
		{"cleanup", func(k *T) {
			k.Cleanup(func(context.Context) { cleaned++ })
			k.Cleanup(func(context.Context) { cleaned *= 10 })
		}, Passed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, 200*time.Millisecond, tc.body)
			if r.State != tc.state || !strings.Contains(r.Message, tc.msg) {
				t.Errorf("state %v message %q, want %v containing %q", r.State, r.Message, tc.state, tc.msg)
			}
			// A skip carries its cause; a skip a diagnosis turned into a
			// failure carries none.
			if want := map[bool]report.Cause{true: report.NotOffered}[r.State == Skipped]; r.Cause != want {
				t.Errorf("cause %q, want %q", r.Cause, want)
			}
		})
	}
	if cleaned != 1 {
		t.Errorf("cleanups ran as %d, want LIFO order giving 1", cleaned)
	}
}

// helperFails is a helper whose failures are reported at its caller.
func helperFails(k *T) {
	k.Helper()
	k.Expect(false).To(BeTrue())
}

func TestLocationSkipsHelpers(t *testing.T) {
	var line int
	r := run(t, time.Second, func(k *T) {
		_, _, line, _ = runtime.Caller(0)
		helperFails(k) // the reported line: the one after Caller's
	})
	if want := fmt.Sprintf("kit/check_test.go:%d", line+1); r.Location != want {
		t.Fatalf("location %q, want the helper's caller, %s", r.Location, want)
	}
}

func TestExecuteAbandonsAStuckBody(t *testing.T) {
	defer SetAbandonGrace(100 * time.Millisecond)()
	release := make(chan struct{})
	defer close(release)
	began := time.Now()
	r := run(t, 10*time.Millisecond, func(*T) { <-release })
	if r.State != Abandoned || !strings.Contains(r.Message, "abandoned") {
		t.Fatalf("state %v message %q", r.State, r.Message)
	}
	if took := time.Since(began); took < 100*time.Millisecond {
		t.Fatalf("abandoned after %v, before the grace", took)
	}
}

func TestDeadline(t *testing.T) {
	c := Check{Need: 3 * time.Second}
	if got := c.Deadline(5 * time.Second); got != 11*time.Second {
		t.Fatalf("deadline %v, want 2*need+margin = 11s", got)
	}
}

// TestOnPremise: a failure inside OnPremise carries the premise; one
// after it does not.
func TestOnPremise(t *testing.T) {
	run := func(body func(*T)) Result {
		return Execute(context.Background(), Check{Entry: catalogue.Entry{ID: "X"}, Run: body}, time.Second)
	}
	if r := run(func(t *T) { t.OnPremise(catalogue.PremiseGETStream, func() { t.Expect(1).To(Equal(2)) }) }); r.State != Failed || r.Premise != catalogue.PremiseGETStream {
		t.Errorf("inside: %v %q", r.State, r.Premise)
	}
	if r := run(func(t *T) { t.OnPremise(catalogue.PremiseGETStream, func() {}); t.Fail("own") }); r.State != Failed || r.Premise != "" {
		t.Errorf("after: %v %q", r.State, r.Premise)
	}
}

// TestErrorShownAsMessage: an assertion on an error shows the error's
// message, none of the Go value behind it.
func TestErrorShownAsMessage(t *testing.T) {
	type wrapped struct{ error }
	r := run(t, time.Second, func(k *T) {
		k.Expect(&wrapped{fmt.Errorf("initialize: HTTP 400: bad")}).NotTo(HaveOccurred(), "initialize handshake")
	})
	if r.State != Failed || !strings.Contains(r.Message, "initialize: HTTP 400: bad") || strings.Contains(r.Message, "0x") || strings.Contains(r.Message, "wrapped") {
		t.Errorf("%v %q", r.State, r.Message)
	}
}

// TestAssertionTailsPlain: a failed assertion's message is the check's
// description and the values compared, without Go type headers, and
// without Gomega's tail where it adds nothing ("Expected nil not to be
// nil" after a description of what was missing).
func TestAssertionTailsPlain(t *testing.T) {
	type exchange struct{ N int }
	for _, c := range []struct {
		body func(*T)
		want string
	}{
		{func(k *T) { var x *exchange; k.Expect(x).NotTo(BeNil(), "after #3 the client sent nothing") }, "after #3 the client sent nothing"},
		{func(k *T) { k.Expect(false).To(BeTrue(), "no retry field") }, "no retry field"},
		{func(k *T) { k.Expect(3).To(Equal(4), "count") }, "count\nExpected\n    3\nto equal\n    4"},
		{func(k *T) { k.Expect(false).To(BeTrue()) }, "Expected\n    false\nto be true"},
	} {
		if r := run(t, time.Second, c.body); r.State != Failed || r.Message != c.want {
			t.Errorf("%v %q, want %q", r.State, r.Message, c.want)
		}
	}
}
