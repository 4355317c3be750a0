package serverchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// taskRPC sends one task request and returns the HTTP status and the answer.
func (tg *fixtureServer) taskRPC(ctx context.Context, c *wire.Client, sid, method string, params any) (int, wire.Message) {
	tg.t.Helper()
	resp, err := c.Call(ctx, sid, method, params)
	if err != nil {
		if ctx.Err() != nil {
			return 0, wire.Message{}
		}
		tg.t.Fatalf("%s: %v", method, err)
	}
	if resp.Status != http.StatusOK {
		return resp.Status, wire.Message{}
	}
	m, err := resp.Result()
	if err != nil {
		tg.t.Fatalf("%s: %v", method, err)
	}
	return resp.Status, m
}

// about sends method with params {taskId: id} and expects HTTP 200.
func (tg *fixtureServer) about(c *wire.Client, sid, method, id string) wire.Message {
	tg.t.Helper()
	status, m := tg.taskRPC(tg.ctx(), c, sid, method, map[string]any{"taskId": id})
	if status != http.StatusOK {
		tg.t.Fatalf("%s: HTTP %d", method, status)
	}
	return m
}

// newTask runs long_operation as a task (ttl in ms if > 0) and returns its id.
func (tg *fixtureServer) newTask(c *wire.Client, sid string, steps, intervalMS int, ttl int64) string {
	tg.t.Helper()
	p := wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": intervalMS}, "")
	p["task"] = map[string]any{}
	if ttl > 0 {
		p["task"] = map[string]any{"ttl": ttl}
	}
	_, m := tg.taskRPC(tg.ctx(), c, sid, "tools/call", p)
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Task.TaskID == "" {
		tg.t.Fatalf("CreateTaskResult: %v %s", m.Error, m.Result)
	}
	return res.Task.TaskID
}

func refused(m wire.Message) bool { return m.Error != nil && m.Error.Code == -32602 }

func TestTaskCreateSlow(t *testing.T) {
	tg := serve(t, "task-create-slow")
	sid := tg.connect(tg.c)
	began := time.Now()
	tg.newTask(tg.c, sid, 5, 200, 0)
	if took := time.Since(began); took < time.Second {
		t.Fatalf("CreateTaskResult after %v; the task takes 1s, and the fixture holds the answer until it is done", took)
	}
}

func TestTaskLazyCreate(t *testing.T) {
	tg := serve(t, "task-lazy-create")
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 5, 200, 0)
	if m := tg.about(tg.c, sid, "tasks/get", id); !refused(m) {
		t.Fatalf("tasks/get right after creation found the task: %s", m.Result)
	}
	tg.waitUntil("the task to appear", func() bool { return tg.about(tg.c, sid, "tasks/get", id).Error == nil })
}

func TestTaskCancelOnDrop(t *testing.T) {
	tg := serve(t, "task-cancel-on-drop")
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 5, 200, 0)
	ctx, cancel := context.WithTimeout(tg.ctx(), 100*time.Millisecond)
	defer cancel()
	tg.taskRPC(ctx, tg.client("alice-token"), sid, "tasks/result", map[string]any{"taskId": id})
	tg.waitUntil("the task to be cancelled", func() bool { return statusOf(tg.about(tg.c, sid, "tasks/get", id)) == "cancelled" })
}

func TestTaskResultOnce(t *testing.T) {
	tg := serve(t, "task-result-once")
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 1, 0, 0)
	if m := tg.about(tg.c, sid, "tasks/result", id); m.Error != nil {
		t.Fatalf("first tasks/result: %v", m.Error)
	}
	if m := tg.about(tg.c, sid, "tasks/result", id); !refused(m) {
		t.Fatalf("second tasks/result: %v %s", m.Error, m.Result)
	}
}

func TestTaskSessionScoped(t *testing.T) {
	tg := serve(t, "task-session-scoped")
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 5, 200, 0)
	if m := tg.about(tg.c, tg.connect(tg.c), "tasks/get", id); !refused(m) {
		t.Fatalf("tasks/get from another session of the same principal: %s", m.Result)
	}
	if m := tg.about(tg.c, sid, "tasks/get", id); m.Error != nil {
		t.Fatalf("tasks/get from the creating session: %v", m.Error)
	}
}

func TestTaskAnyPrincipal(t *testing.T) {
	tg := serve(t, "task-any-principal")
	id := tg.newTask(tg.c, tg.connect(tg.c), 5, 200, 0)
	bob := tg.client("bob-token")
	if m := tg.about(bob, tg.connect(bob), "tasks/get", id); m.Error != nil || statusOf(m) != "working" {
		t.Fatalf("bob's tasks/get of alice's task: %v %s", m.Error, m.Result)
	}
}

func TestTaskUnknown500(t *testing.T) {
	tg := serve(t, "task-unknown-500")
	sid := tg.connect(tg.c)
	if status, _ := tg.taskRPC(tg.ctx(), tg.c, sid, "tasks/get", map[string]any{"taskId": "unknown-task"}); status != http.StatusInternalServerError {
		t.Fatalf("tasks/get of a foreign-shaped id: HTTP %d", status)
	}
	if m := tg.about(tg.c, sid, "tasks/get", rand.Text()); !refused(m) {
		t.Fatalf("tasks/get of a well-formed unknown id: %v", m.Error)
	}
}

// TestTaskTTLGranted: task-unknown-500 grants a task created with a ttl
// 300000 ms, reports it, and keeps the task that long, no longer.
func TestTaskTTLGranted(t *testing.T) {
	tg := serve(t, "task-unknown-500", fakeClock)
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 1, 0, 5000)
	var got struct {
		TTL int64 `json:"ttl"`
	}
	if m := tg.about(tg.c, sid, "tasks/get", id); m.Error != nil || json.Unmarshal(m.Result, &got) != nil || got.TTL != grantedTTL.Milliseconds() {
		t.Fatalf("tasks/get of a task created with ttl 5000: %v %s, want ttl %d", m.Error, m.Result, grantedTTL.Milliseconds())
	}
	if m := tg.about(tg.c, sid, "tasks/result", id); m.Error != nil {
		t.Fatalf("tasks/result: %v", m.Error)
	}
	tg.clock.Step(grantedTTL - time.Second)
	if m := tg.about(tg.c, sid, "tasks/result", id); m.Error != nil {
		t.Fatalf("tasks/result a second before the granted ttl elapses: %v", m.Error)
	}
	tg.clock.Step(time.Second)
	if m := tg.about(tg.c, sid, "tasks/get", id); !refused(m) {
		t.Fatalf("tasks/get once the granted ttl elapsed: %v %s", m.Error, m.Result)
	}
}

func TestTaskCancelTerminalOK(t *testing.T) {
	tg := serve(t, "task-cancel-terminal-ok")
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 1, 0, 0)
	tg.about(tg.c, sid, "tasks/result", id)
	if m := tg.about(tg.c, sid, "tasks/cancel", id); m.Error != nil || statusOf(m) != "cancelled" {
		t.Fatalf("tasks/cancel of a completed task: %v %s", m.Error, m.Result)
	}
	if m := tg.about(tg.c, sid, "tasks/get", id); statusOf(m) != "cancelled" {
		t.Fatalf("the completed task after the cancel: %v %s", m.Error, m.Result)
	}
}

func TestTaskTTLHalved(t *testing.T) {
	tg := serve(t, "task-ttl-halved", fakeClock)
	sid := tg.connect(tg.c)
	id := tg.newTask(tg.c, sid, 1, 0, 10000)
	if m := tg.about(tg.c, sid, "tasks/result", id); m.Error != nil {
		t.Fatalf("tasks/result: %v", m.Error)
	}
	tg.clock.Step(5 * time.Second)
	if m := tg.about(tg.c, sid, "tasks/result", id); !refused(m) {
		t.Fatalf("tasks/result at half the ttl: %v %s", m.Error, m.Result)
	}
}

func TestTaskLost500(t *testing.T) {
	before := serve(t, "task-lost-500")
	sid := before.connect(before.c)
	id := before.newTask(before.c, sid, 1, 0, 0)
	if !strings.Contains(id, "~") {
		t.Fatalf("task id %q is not tagged with the boot", id)
	}
	if m := before.about(before.c, sid, "tasks/result", id); m.Error != nil || !strings.Contains(string(m.Result), id) {
		t.Fatalf("tasks/result in the same process: %v %s", m.Error, m.Result)
	}
	after := serve(t, "task-lost-500") // the restarted process
	if status, _ := after.taskRPC(after.ctx(), after.c, after.connect(after.c), "tasks/get", map[string]any{"taskId": id}); status != http.StatusInternalServerError {
		t.Fatalf("tasks/get of a task from before the restart: HTTP %d", status)
	}
	if m := before.about(before.c, sid, "tasks/get", rand.Text()); !refused(m) {
		t.Fatalf("tasks/get of an unknown id: %v", m.Error)
	}
}
