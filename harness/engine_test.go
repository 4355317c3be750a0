package harness

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestEngineSchedules: at most --parallel checks run at once, an
// exclusive check runs with no other, every selected check gives one
// progress line, and the results come back in catalogue order, with the
// checks left out marked as not selected.
func TestEngineSchedules(t *testing.T) {
	entries := suites.Of(catalogue.Server)[:10]
	var running, most atomic.Int64
	var mu sync.Mutex
	var overlapped []string
	body := func(exclusive bool) func(*kit.T) {
		return func(k *kit.T) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if exclusive && n > 1 {
				mu.Lock()
				overlapped = append(overlapped, k.Entry.ID)
				mu.Unlock()
			}
			k.Pause(20 * time.Millisecond)
		}
	}
	var checks []kit.Check
	for i, e := range entries {
		e.Exclusive = i == 2 || i == 7
		checks = append(checks, kit.Check{Entry: e, Need: time.Duration(i) * time.Millisecond, Run: body(e.Exclusive)})
	}
	var progress bytes.Buffer
	en := &engine{parallel: 3, margin: 5 * time.Second, progress: &progress}
	left := entries[9].ID
	got := en.run(context.Background(), checks, func(e catalogue.Entry) bool { return e.ID != left })

	if m := most.Load(); m > 3 || m < 2 {
		t.Errorf("at most %d checks ran at once, want 2 or 3 with --parallel 3", m)
	}
	if len(overlapped) > 0 {
		t.Errorf("exclusive checks ran beside others: %v", overlapped)
	}
	if n := strings.Count(progress.String(), "\n"); n != 9 {
		t.Errorf("%d progress lines, want one per selected check (9):\n%s", n, progress.String())
	}
	for i, c := range got {
		switch {
		case c.ID != entries[i].ID:
			t.Fatalf("result %d is %s, want catalogue order (%s)", i, c.ID, entries[i].ID)
		case c.ID == left && (c.Verdict != report.Skip || c.Cause != report.NotSelected):
			t.Errorf("%s: %s %q, want not selected", c.ID, c.Verdict, c.Message)
		case c.ID != left && c.Verdict != report.Pass:
			t.Errorf("%s: %s %q", c.ID, c.Verdict, c.Message)
		}
	}
}

// TestEngineInterrupted: checks not started when the run's context ends
// are skipped with its cause, not passed.
func TestEngineInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errTimeoutForTest)
	e := suites.Of(catalogue.Server)[0]
	en := &engine{parallel: 1, margin: time.Second, progress: &bytes.Buffer{}}
	got := en.run(ctx, []kit.Check{{Entry: e, Run: func(*kit.T) {}}}, func(catalogue.Entry) bool { return true })
	if got[0].Verdict != report.Skip || !strings.Contains(got[0].Message, errTimeoutForTest.Error()) {
		t.Fatalf("%s %q, want a skip naming the cause", got[0].Verdict, got[0].Message)
	}
}

var errTimeoutForTest = errors.New("the run's --timeout passed")

// TestEngineRetriesInconclusive: an inconclusive check runs once more;
// the second attempt's result is the verdict, with the first's reason
// kept, and an inconclusive result twice is never a failure, even for a
// check the baseline lists.
func TestEngineRetriesInconclusive(t *testing.T) {
	ents := suites.Of(catalogue.Server)
	var attempts [2]atomic.Int64
	checks := []kit.Check{
		{Entry: ents[0], Run: func(k *kit.T) {
			if attempts[0].Add(1) == 1 {
				k.Inconclusive("the harness's own initialize took 3s")
			}
		}},
		{Entry: ents[1], Run: func(k *kit.T) {
			attempts[1].Add(1)
			k.Inconclusive("the target granted a ttl beyond the check's budget")
		}},
	}
	en := &engine{parallel: 2, margin: 5 * time.Second, progress: &bytes.Buffer{}, expected: map[string]bool{ents[1].ID: true}}
	got := en.run(context.Background(), checks, func(catalogue.Entry) bool { return true })
	if got[0].Verdict != report.Pass || got[0].Retried != "the harness's own initialize took 3s" || attempts[0].Load() != 2 {
		t.Errorf("%s: %s, retried %q after %d attempts; want a pass on the second attempt", got[0].ID, got[0].Verdict, got[0].Retried, attempts[0].Load())
	}
	if got[1].Verdict != report.Inconclusive || attempts[1].Load() != 2 || !strings.Contains(got[1].Message, "on a retry either: the target granted") {
		t.Errorf("%s: %s %q after %d attempts; want inconclusive after 2", got[1].ID, got[1].Verdict, got[1].Message, attempts[1].Load())
	}
}

// TestEngineRerunsInterfered: a check whose evidence the checks beside it
// took is run again alone, after every other check of the pool has
// ended, and only that run's result stands; with --parallel 1 nothing ran
// beside it, and its skip stands.
func TestEngineRerunsInterfered(t *testing.T) {
	ents := suites.Of(catalogue.Server)
	for _, parallel := range []int{3, 1} {
		var attempts atomic.Int64
		var running atomic.Int64
		var aloneAtRerun atomic.Bool
		checks := []kit.Check{{Entry: ents[0], Run: func(k *kit.T) {
			n := running.Add(1)
			defer running.Add(-1)
			if attempts.Add(1) == 1 {
				k.Skip(report.Interfered, "its streams carried other checks' notifications")
			}
			aloneAtRerun.Store(n == 1)
		}}}
		for _, e := range ents[1:4] {
			checks = append(checks, kit.Check{Entry: e, Run: func(k *kit.T) {
				running.Add(1)
				defer running.Add(-1)
				k.Pause(30 * time.Millisecond)
			}})
		}
		en := &engine{parallel: parallel, margin: 5 * time.Second, progress: &bytes.Buffer{}}
		got := en.run(context.Background(), checks, func(catalogue.Entry) bool { return true })
		switch {
		case parallel > 1 && (got[0].Verdict != report.Pass || attempts.Load() != 2 || !aloneAtRerun.Load()):
			t.Errorf("--parallel %d: %s after %d attempts (alone at the second: %v); want a pass on a second run, alone", parallel, got[0].Verdict, attempts.Load(), aloneAtRerun.Load())
		case parallel == 1 && (got[0].Verdict != report.Skip || attempts.Load() != 1):
			t.Errorf("--parallel 1: %s after %d attempts; want the skip of the only run", got[0].Verdict, attempts.Load())
		}
	}
}

// TestBlock: a check that failed while a check its premise depends on
// failed at least as severely is blocked by it, through blocked checks
// too; a passing dependent stays a pass, and a root less severe than the
// dependent blocks nothing.
func TestBlock(t *testing.T) {
	res := map[string]report.Check{
		"TASK-DURABLE-CREATE":    {ID: "TASK-DURABLE-CREATE", Verdict: report.Fail, Message: "tasks/get: -32602 unknown task\nmore"},
		"TASK-CREATE-FAST":       {ID: "TASK-CREATE-FAST", Verdict: report.Warn, Message: "no CreateTaskResult"},
		"TASK-TTL-KEPT":          {ID: "TASK-TTL-KEPT", Verdict: report.Pass},
		"TASK-RESULT-REPEATABLE": {ID: "TASK-RESULT-REPEATABLE", Verdict: report.Fail, Message: "own"},
		"ENVELOPE-404":           {ID: "ENVELOPE-404", Verdict: report.Fail, Message: "400"},
		"ENVELOPE-RESUME-HINT":   {ID: "ENVELOPE-RESUME-HINT", Verdict: report.Fail, Message: "no envelope"},
		"RESUME-TOKEN-OWNER":     {ID: "RESUME-TOKEN-OWNER", Verdict: report.Fail, Message: "no data.resume"},
		"RECREATE-REINIT-200":    {ID: "RECREATE-REINIT-200", Verdict: report.ExpectedFailure, Message: "duplicate initialize"},
		"RECREATE-STATE-KEPT":    {ID: "RECREATE-STATE-KEPT", Verdict: report.Fail, Message: "counter reset"},
		"RECREATE-CONCURRENT":    {ID: "RECREATE-CONCURRENT", Verdict: report.ExpectedFailure, Message: "duplicate initialize"},
	}
	block(res)
	for id, want := range map[string]struct {
		v  report.Verdict
		by string
	}{
		"TASK-DURABLE-CREATE":    {report.Fail, ""},
		"TASK-CREATE-FAST":       {report.Blocked, "TASK-DURABLE-CREATE"},
		"TASK-TTL-KEPT":          {report.Pass, ""},
		"TASK-RESULT-REPEATABLE": {report.Blocked, "TASK-DURABLE-CREATE"},
		"ENVELOPE-RESUME-HINT":   {report.Blocked, "ENVELOPE-404"},
		"RESUME-TOKEN-OWNER":     {report.Blocked, "ENVELOPE-404"},
		"RECREATE-STATE-KEPT":    {report.Fail, ""},
		"RECREATE-CONCURRENT":    {report.Blocked, "RECREATE-REINIT-200"},
	} {
		c := res[id]
		if c.Verdict != want.v || strings.Join(c.BlockedBy, ",") != want.by {
			t.Errorf("%s: %s blocked by %v, want %s by %q", id, c.Verdict, c.BlockedBy, want.v, want.by)
		}
	}
	if m := res["TASK-RESULT-REPEATABLE"].Message; !strings.HasPrefix(m, "blocked by TASK-DURABLE-CREATE (fail: tasks/get: -32602 unknown task)") || !strings.Contains(m, "own result (fail): own") {
		t.Errorf("blocked message %q", m)
	}
}

// TestBlockOnPremise: a failure whose step stood on a premise is blocked
// by the premise's root when that failed, naming the premise; the same
// failure while the root passed is the check's own.
func TestBlockOnPremise(t *testing.T) {
	get := string(catalogue.PremiseGETStream)
	for _, tt := range []struct {
		root report.Verdict
		want report.Verdict
	}{{report.Fail, report.Blocked}, {report.Pass, report.Fail}} {
		res := map[string]report.Check{
			"GET-SSE-OR-405": {ID: "GET-SSE-OR-405", Verdict: tt.root, Message: "400"},
			"SLOW-READER":    {ID: "SLOW-READER", Verdict: report.Fail, Message: "GET stream: HTTP 400", Premise: get},
			"GET-PRIMED":     {ID: "GET-PRIMED", Verdict: report.Fail, Message: "no priming event"},
		}
		block(res)
		if c := res["SLOW-READER"]; c.Verdict != tt.want {
			t.Errorf("root %s: SLOW-READER %s (%s), want %s", tt.root, c.Verdict, c.Message, tt.want)
		} else if tt.want == report.Blocked && (!slices.Equal(c.BlockedBy, []string{"GET-SSE-OR-405"}) || !strings.Contains(c.Message, catalogue.PremiseGETStream.Says())) {
			t.Errorf("SLOW-READER blocked by %v: %s", c.BlockedBy, c.Message)
		}
		if c := res["GET-PRIMED"]; c.Verdict != report.Fail {
			t.Errorf("root %s: GET-PRIMED, which failed on its own, is %s", tt.root, c.Verdict)
		}
	}
}

// TestBlockOwn: a failure marked the check's own is never blocked, even
// by a failed check its premise depends on.
func TestBlockOwn(t *testing.T) {
	res := map[string]report.Check{
		"SESS-UNKNOWN-404":    {ID: "SESS-UNKNOWN-404", Verdict: report.Fail, Message: "400"},
		"RECREATE-OWNER-ONLY": {ID: "RECREATE-OWNER-ONLY", Verdict: report.Fail, Message: "served (HTTP 200)", Premise: string(catalogue.Own)},
		"SESS-DELETE":         {ID: "SESS-DELETE", Verdict: report.Fail, Message: "400"},
	}
	block(res)
	if c := res["RECREATE-OWNER-ONLY"]; c.Verdict != report.Fail {
		t.Errorf("RECREATE-OWNER-ONLY, its own failure: %s blocked by %v", c.Verdict, c.BlockedBy)
	}
	if c := res["SESS-DELETE"]; c.Verdict != report.Blocked {
		t.Errorf("SESS-DELETE: %s, want blocked by SESS-UNKNOWN-404", c.Verdict)
	}
}

// TestBlockOwnPremise: a failed step that stood on the premise the check
// itself is the root of (ENVELOPE-404 reading the envelope it grades) is
// the check's own: its static dependency (SESS-UNKNOWN-404, failed for
// another reason) does not block it.
func TestBlockOwnPremise(t *testing.T) {
	res := map[string]report.Check{
		"SESS-UNKNOWN-404": {ID: "SESS-UNKNOWN-404", Verdict: report.Fail, Message: "DELETE with unknown session id: 400"},
		"ENVELOPE-404":     {ID: "ENVELOPE-404", Verdict: report.Fail, Message: "Content-Type of the 404", Premise: string(catalogue.PremiseEnvelope)},
	}
	block(res)
	if c := res["ENVELOPE-404"]; c.Verdict != report.Fail {
		t.Errorf("ENVELOPE-404, its own failure: %s blocked by %v", c.Verdict, c.BlockedBy)
	}
}

// TestVerdictLinksFixes: a failed check links the recipes for it; a
// passed one links none.
func TestVerdictLinksFixes(t *testing.T) {
	en := &engine{parallel: 1, margin: time.Second, progress: &bytes.Buffer{}}
	e := suites.MustLookup("ORIGIN-403")
	if c := en.verdict(e, "", kit.Result{State: kit.Failed, Message: "served"}); len(c.Fixes) == 0 || !strings.HasPrefix(c.Fixes[0].Ref, "docs/recipes/") {
		t.Errorf("failed: fixes %v", c.Fixes)
	}
	if c := en.verdict(e, "", kit.Result{State: kit.Passed}); len(c.Fixes) != 0 {
		t.Errorf("passed: fixes %v", c.Fixes)
	}
}

// TestMessagesBounded: whatever a check quotes, its message in the report
// stays within report.MaxMessage, blocked and retried ones included.
func TestMessagesBounded(t *testing.T) {
	huge := strings.Repeat("x", 3*report.MaxMessage)
	en := &engine{parallel: 1, margin: time.Second, progress: &bytes.Buffer{}}
	e := suites.MustLookup("SESS-DELETE")
	for _, r := range []kit.Result{
		{State: kit.Failed, Message: huge},
		{State: kit.Inconclusive, Message: huge, Retried: huge + "y"},
		{State: kit.Skipped, Message: huge},
	} {
		if c := en.verdict(e, "", r); len(c.Message) > report.MaxMessage {
			t.Errorf("%v: a message of %d bytes", r.State, len(c.Message))
		}
	}
	res := map[string]report.Check{
		"SESS-UNKNOWN-404": {ID: "SESS-UNKNOWN-404", Verdict: report.Fail, Message: huge},
		"SESS-DELETE":      {ID: "SESS-DELETE", Verdict: report.Fail, Message: huge},
	}
	block(res)
	if c := res["SESS-DELETE"]; c.Verdict != report.Blocked || len(c.Message) > report.MaxMessage {
		t.Errorf("blocked: %s, a message of %d bytes", c.Verdict, len(c.Message))
	}
}
