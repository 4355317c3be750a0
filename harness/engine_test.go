package harness

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestEngineSchedules: at most --parallel checks run at once, an
// exclusive check runs with no other, every selected check gives one
// progress line, and the results come back in catalogue order, with the
// checks left out marked as not selected.
func TestEngineSchedules(t *testing.T) {
	entries := catalogue.Of(catalogue.Server)[:10]
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
		case c.ID == left && (c.Verdict != report.Skip || c.Message != report.NotSelected()):
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
	e := catalogue.Of(catalogue.Server)[0]
	en := &engine{parallel: 1, margin: time.Second, progress: &bytes.Buffer{}}
	got := en.run(ctx, []kit.Check{{Entry: e, Run: func(*kit.T) {}}}, func(catalogue.Entry) bool { return true })
	if got[0].Verdict != report.Skip || !strings.Contains(got[0].Message, errTimeoutForTest.Error()) {
		t.Fatalf("%s %q, want a skip naming the cause", got[0].Verdict, got[0].Message)
	}
}

var errTimeoutForTest = errors.New("the run's --timeout passed")
