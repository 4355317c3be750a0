package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestWorkPerRequestBounded: a batch larger than MaxBatch is refused whole,
// and a session runs at most MaxCallsPerSession tool calls at once.
func TestWorkPerRequestBounded(t *testing.T) {
	cfg := noKeepAlive
	cfg.MaxBatch, cfg.MaxCallsPerSession = 3, 2
	e := newEnv(t, cfg)
	e.c.ProtocolVersion = "2025-03-26" // the last revision with batches
	sid := e.connect(e.c)
	batch := func(n int) []any {
		var b []any
		for i := range n {
			b = append(b, map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": wire.ToolParams("echo", map[string]any{"text": "x"}, "")})
		}
		return b
	}
	if resp := e.do(e.c, http.MethodPost, sid, batch(4)); resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "at most 3") {
		t.Fatalf("batch of 4: HTTP %d %s", resp.Status, resp.Body)
	}
	if resp := e.do(e.c, http.MethodPost, sid, batch(3)); resp.Status != http.StatusOK {
		t.Fatalf("batch of 3: HTTP %d %s", resp.Status, resp.Body)
	}

	c := e.client()
	sid = e.connect(c)
	e.startLongOperation(c, sid, 1)
	e.startLongOperation(c, sid, 1)
	eventually(t, "two calls waiting for their step", func() bool { return e.clock.Waiters() == 2 })
	if _, err := c.ToolText(e.ctx(), sid, "echo", map[string]any{"text": "third"}); err == nil || !strings.Contains(err.Error(), "too many tool calls and tasks/result waits") {
		t.Fatalf("third concurrent call: %v", err)
	}
	e.clock.Step(time.Second)
	eventually(t, "the calls to end", func() bool { return !e.busy() })
	if got := e.tool(c, sid, "echo", map[string]any{"text": "later"}); got != "later" {
		t.Fatalf("call after the others ended: %q", got)
	}
}

// TestTaskWaitsBounded: tasks/result waits count with a session's tool
// calls, so a client cannot park an unbounded number of requests on a task
// that runs for an hour; another session has its own count.
func TestTaskWaitsBounded(t *testing.T) {
	cfg := noKeepAlive
	cfg.MaxCallsPerSession = 2
	e := newEnv(t, cfg)
	sid := e.connect(e.c)
	tk := e.createTask(e.c, sid, 1, 60000, nil)
	// The creating tools/call gives its place back just after it answered.
	eventually(t, "the task's creation to give its place back", func() bool { return e.srv.Reserved() == 0 })
	for range 2 {
		waitResult(e.ctx(), e.client(), sid, tk.TaskID)
	}
	// Counted by their places under the limit, not as requests in
	// flight, which include others that end late on a busy machine.
	eventually(t, "two tasks/result waiting", func() bool { return e.srv.Reserved() == 2 })
	m := e.rpc(e.c, sid, "tasks/result", map[string]any{"taskId": tk.TaskID})
	if m.Error == nil || !strings.Contains(m.Error.Message, "too many tool calls and tasks/result waits") {
		t.Fatalf("third tasks/result: %+v %s", m.Error, m.Result)
	}
	if got := e.tool(e.c, e.connect(e.c), "echo", map[string]any{"text": "x"}); got != "x" {
		t.Fatalf("another session's call: %q", got)
	}
}
