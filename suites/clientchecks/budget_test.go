package clientchecks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// fastClient is a measured run of a client that starts and calls quickly.
var fastClient = Measurement{Took: 100 * time.Millisecond, FirstRequest: 50 * time.Millisecond, Requests: 4, Exit: "exit status 0"}

// TestMeasure: the undisturbed run is timed from start to exit, with its
// requests; the budgets follow it, and --parallel beyond the cores
// stretches them.
func TestMeasure(t *testing.T) {
	t.Parallel()
	cl := &Client{Command: helperCommand(t, "quiet"), StateRoot: t.TempDir()}
	m := cl.Measure(context.Background())
	if m.Took <= 0 || m.Requests != 1 || m.FirstRequest <= 0 || m.FirstRequest > m.Took || m.Exit != "exit status 0" {
		t.Fatalf("measured %+v, want a timed run with one request", m)
	}
	if cl.Measured != m {
		t.Errorf("the client keeps %+v, measured %+v", cl.Measured, m)
	}
	slow := &Client{Measured: Measurement{Took: 3 * time.Second}}
	if got := slow.allowance(); got != 12*time.Second {
		t.Errorf("a client whose undisturbed run takes 3s gets %v a run, want 12s", got)
	}
	d := def{runs: 2, waits: time.Second}
	if got := d.need(slow); got != 25*time.Second {
		t.Errorf("two runs and 1s of waits need %v, want 25s", got)
	}
	slow.Parallel = 3 * cores
	if got := d.need(slow); got != 73*time.Second {
		t.Errorf("at --parallel %d on %d cores they need %v, want 73s", slow.Parallel, cores, got)
	}
	if got := (&Client{}).allowance(); got != fallbackRun {
		t.Errorf("an unmeasured client gets %v a run, want %v", got, fallbackRun)
	}
}

// TestJudgeLate: a run past its budget with no sign of life never
// started; one with far more requests than the undisturbed run loops; one
// whose last sign came in the last quarter of its life works, slowly (the
// machine is busy); one silent for longer stopped.
func TestJudgeLate(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name     string
		sign     time.Time
		n        int
		measured int
		want     lateness
	}{
		{"no sign", time.Time{}, 0, 4, lateSilent},
		{"21 requests, undisturbed 4", now, 21, 4, lateLoops},
		{"20 requests, undisturbed 4", now, 20, 4, lateBusy},
		{"17 requests, undisturbed 4 (busy at 4x)", now.Add(-2 * time.Second), 17, 4, lateQuiet},
		{"41 requests, undisturbed 10", now, 41, 10, lateLoops},
		{"40 requests, undisturbed 10", now, 40, 10, lateBusy},
		{"a sign 0.9s ago of 4s", now.Add(-900 * time.Millisecond), 3, 4, lateBusy},
		{"a sign 1.5s ago of 4s", now.Add(-1500 * time.Millisecond), 3, 4, lateQuiet},
	} {
		if got := judgeLate(tc.sign, tc.n, 4*time.Second, tc.measured); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLateRuns: a run past its budget ends by its budget, not at the
// check's deadline, with what judgeLate makes of it: inconclusive when the
// scripted server saw it progress (a saturated machine slows a working
// client) or when the undisturbed run was itself slow, failed when it went
// quiet. Each case is one a busy machine cannot turn into another: the
// quiet client's one request comes long before the last quarter of a 12 s
// budget. (Loops are judged by count, which a busy machine lowers: see
// TestJudgeLate.)
func TestLateRuns(t *testing.T) {
	t.Parallel()
	roomy := Measurement{Took: 3 * time.Second, FirstRequest: 50 * time.Millisecond, Requests: 1, Exit: "exit status 0"}
	for _, tc := range []struct {
		kind     string
		measured Measurement
		deadline time.Duration
		state    kit.State
		want     string
	}{
		{"slow", fastClient, 0, kit.Inconclusive, "the scripted server saw it progress"},
		{"quiet", roomy, 0, kit.Failed, "and nothing since: the client does not finish"},
		{"quiet", Measurement{Took: 11 * time.Second, Requests: 1}, 3 * time.Second, kit.Inconclusive, "the client's undisturbed run itself took 11s"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			cl := &Client{Command: helperCommand(t, tc.kind), Measured: tc.measured}
			began := time.Now()
			r := runCheck(t, cl, "CLI-STATUS", tc.deadline)
			took := time.Since(began)
			if r.State != tc.state || !strings.Contains(r.Message, tc.want) || !strings.HasPrefix(r.Message, "run 1 (call) still running") {
				t.Fatalf("state %v, message %q; want %v with %q", r.State, r.Message, tc.state, tc.want)
			}
			if budget := cl.allowance(); tc.deadline == 0 && (took < budget || took > 2*budget) {
				t.Errorf("ended after %v; the run's budget is %v", took, budget)
			}
		})
	}
}
