package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// rpc sends one request and returns its response message.
func (e *env) rpc(c *wire.Client, sid, method string, params any) wire.Message {
	e.t.Helper()
	resp, err := c.Call(e.ctx(), sid, method, params)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	if resp.Status != http.StatusOK {
		e.t.Fatalf("%s: HTTP %d %s", method, resp.Status, resp.Body)
	}
	m, err := resp.Result()
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return m
}

type taskWire struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	CreatedAt    string `json:"createdAt"`
	TTL          int64  `json:"ttl"`
	PollInterval int64  `json:"pollInterval"`
}

// task decodes a tasks/get or tasks/cancel answer, failing on an error.
func (e *env) task(m wire.Message) taskWire {
	e.t.Helper()
	if m.Error != nil {
		e.t.Fatalf("task request: %v", m.Error)
	}
	var t taskWire
	if err := json.Unmarshal(m.Result, &t); err != nil || t.TaskID == "" {
		e.t.Fatalf("task result %s: %v", m.Result, err)
	}
	return t
}

// createTask runs long_operation as a task and returns the task.
func (e *env) createTask(c *wire.Client, sid string, steps, intervalMS int, ttl any) taskWire {
	e.t.Helper()
	p := wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": intervalMS}, "")
	p["task"] = map[string]any{}
	if ttl != nil {
		p["task"] = map[string]any{"ttl": ttl}
	}
	m := e.rpc(c, sid, "tools/call", p)
	if m.Error != nil {
		e.t.Fatalf("task-augmented tools/call: %v", m.Error)
	}
	var res struct {
		Task taskWire `json:"task"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.Task.TaskID == "" {
		e.t.Fatalf("CreateTaskResult %s: %v", m.Result, err)
	}
	return res.Task
}

func expectCode(t *testing.T, what string, m wire.Message, code int) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code {
		t.Fatalf("%s: want error %d, got error %v result %s", what, code, m.Error, m.Result)
	}
}

// TestTasksAnnounced: the tasks capability at initialize, and task
// support on exactly long_operation and job_start.
func TestTasksAnnounced(t *testing.T) {
	e := newEnv(t, server.Config{})
	resp, err := e.c.Initialize(e.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := resp.Result()
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Capabilities struct {
			Tools map[string]any `json:"tools"`
			Tasks struct {
				List     map[string]any `json:"list"`
				Cancel   map[string]any `json:"cancel"`
				Requests struct {
					Tools struct {
						Call map[string]any `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(m.Result, &init); err != nil {
		t.Fatal(err)
	}
	c := init.Capabilities
	if c.Tools == nil || c.Tasks.Cancel == nil || c.Tasks.Requests.Tools.Call == nil || c.Tasks.List != nil {
		t.Fatalf("capabilities without auth: %s", m.Result)
	}
	sid := resp.SessionID()
	if _, err := e.c.Post(e.ctx(), sid, wire.Notification("notifications/initialized")); err != nil {
		t.Fatal(err)
	}
	lm := e.rpc(e.c, sid, "tools/list", map[string]any{})
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(lm.Result, &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		want := tool.Name == "long_operation" || tool.Name == "job_start"
		if got := tool.Execution != nil && tool.Execution.TaskSupport == "optional"; got != want || tool.InputSchema == nil {
			t.Errorf("tool %s: execution %+v, input schema %v", tool.Name, tool.Execution, tool.InputSchema != nil)
		}
	}

	e2, alice, _ := twoPrincipals(t)
	resp, err = alice.Initialize(e2.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	m, _ = resp.Result()
	if !strings.Contains(string(m.Result), `"list":{}`) {
		t.Fatalf("capabilities with bearer tokens lack tasks.list: %s", m.Result)
	}
}

// awaitTimer waits until the task's step timer is armed on the fake clock.
func (e *env) awaitTimer() {
	e.t.Helper()
	eventually(e.t, "a step timer", e.clock.HasWaiters)
}

// TestTaskLifecycle: created at once, reachable from another session and
// connection, tasks/result blocks until completion and repeats, with the
// related-task _meta; cancelling the finished task is refused.
func TestTaskLifecycle(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 250 * time.Millisecond})
	sid := e.connect(e.c)
	tk := e.createTask(e.c, sid, 2, 1000, nil)
	if tk.Status != "working" || tk.PollInterval != 250 || tk.TTL <= 0 || len(tk.TaskID) < 22 {
		t.Fatalf("created task: %+v", tk)
	}
	other := e.client()
	osid := e.connect(other)
	if got := e.task(e.rpc(other, osid, "tasks/get", map[string]any{"taskId": tk.TaskID})); got.Status != "working" {
		t.Fatalf("tasks/get from another session: %+v", got)
	}
	results := make(chan wire.Message, 1)
	go func() {
		resp, err := other.Call(e.ctx(), osid, "tasks/result", map[string]any{"taskId": tk.TaskID})
		if err != nil {
			results <- wire.Message{Error: &wire.RPCError{Message: err.Error()}}
			return
		}
		m, _ := resp.Result()
		results <- m
	}()
	for range 2 {
		e.awaitTimer()
		select {
		case m := <-results:
			t.Fatalf("tasks/result answered before completion: %+v", m)
		default:
		}
		e.clock.Step(time.Second)
	}
	var first wire.Message
	select {
	case first = <-results:
	case <-time.After(10 * time.Second):
		t.Fatal("tasks/result did not answer after completion")
	}
	if first.Error != nil || !strings.Contains(string(first.Result), "completed 2 steps") || !strings.Contains(string(first.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+tk.TaskID+`"}`) {
		t.Fatalf("tasks/result: %+v %s", first.Error, first.Result)
	}
	again := e.rpc(e.c, sid, "tasks/result", map[string]any{"taskId": tk.TaskID})
	if string(again.Result) != string(first.Result) {
		t.Fatalf("second tasks/result differs:\n%s\n%s", again.Result, first.Result)
	}
	if got := e.task(e.rpc(e.c, sid, "tasks/get", map[string]any{"taskId": tk.TaskID})); got.Status != "completed" {
		t.Fatalf("tasks/get after completion: %+v", got)
	}
	expectCode(t, "tasks/cancel of a completed task", e.rpc(e.c, sid, "tasks/cancel", map[string]any{"taskId": tk.TaskID}), -32602)
}

// TestTaskOutlivesSession: deleting the session that created a task
// neither cancels nor hides it.
func TestTaskOutlivesSession(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	tk := e.createTask(e.c, sid, 1, 1000, nil)
	if resp := e.do(e.c, http.MethodDelete, sid, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.Status)
	}
	e.awaitTimer()
	e.clock.Step(time.Second)
	nsid := e.connect(e.c)
	m := e.rpc(e.c, nsid, "tasks/result", map[string]any{"taskId": tk.TaskID})
	if m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") {
		t.Fatalf("tasks/result after DELETE: %+v %s", m.Error, m.Result)
	}
}

// TestTaskPrincipalBound: another principal can neither read, wait on nor
// cancel alice's task, nor list it; alice lists it.
func TestTaskPrincipalBound(t *testing.T) {
	e, alice, mallory := twoPrincipals(t)
	asid := e.connect(alice)
	tk := e.createTask(alice, asid, 1, 1000, nil)
	msid := e.connect(mallory)
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		expectCode(t, "mallory's "+method, e.rpc(mallory, msid, method, map[string]any{"taskId": tk.TaskID}), -32602)
	}
	if m := e.rpc(mallory, msid, "tasks/list", map[string]any{}); m.Error != nil || strings.Contains(string(m.Result), tk.TaskID) {
		t.Fatalf("mallory's tasks/list: %+v %s", m.Error, m.Result)
	}
	if m := e.rpc(alice, e.connect(alice), "tasks/list", map[string]any{}); m.Error != nil || !strings.Contains(string(m.Result), tk.TaskID) {
		t.Fatalf("alice's tasks/list from a new session: %+v %s", m.Error, m.Result)
	}
	if got := e.task(e.rpc(alice, asid, "tasks/get", map[string]any{"taskId": tk.TaskID})); got.Status != "working" {
		t.Fatalf("mallory's attempts changed alice's task: %+v", got)
	}
}

// TestTaskErrors: unknown ids, a tool without task support, bad
// arguments and tasks/list without authentication.
func TestTaskErrors(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		expectCode(t, method+" of an unknown id", e.rpc(e.c, sid, method, map[string]any{"taskId": "no-such-task"}), -32602)
	}
	expectCode(t, "tasks/get without taskId", e.rpc(e.c, sid, "tasks/get", map[string]any{}), -32602)
	p := wire.ToolParams("echo", map[string]any{"text": "x"}, "")
	p["task"] = map[string]any{}
	expectCode(t, "echo as a task", e.rpc(e.c, sid, "tools/call", p), -32601)
	p = wire.ToolParams("long_operation", map[string]any{"steps": 0}, "")
	p["task"] = map[string]any{}
	expectCode(t, "long_operation with bad arguments", e.rpc(e.c, sid, "tools/call", p), -32602)
	expectCode(t, "tasks/list without authentication", e.rpc(e.c, sid, "tasks/list", map[string]any{}), -32601)
	if e.srv.TaskCount() != 0 {
		t.Fatalf("refused calls created %d tasks", e.srv.TaskCount())
	}
}

// TestTaskCancel: a working task is cancelled before the answer, stays
// cancelled, and a second cancel is refused.
func TestTaskCancel(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	tk := e.createTask(e.c, sid, 1, 1000, nil)
	if got := e.task(e.rpc(e.c, sid, "tasks/cancel", map[string]any{"taskId": tk.TaskID})); got.Status != "cancelled" {
		t.Fatalf("tasks/cancel: %+v", got)
	}
	e.clock.Step(time.Second)
	if got := e.task(e.rpc(e.c, sid, "tasks/get", map[string]any{"taskId": tk.TaskID})); got.Status != "cancelled" {
		t.Fatalf("cancelled task later: %+v", got)
	}
	expectCode(t, "second tasks/cancel", e.rpc(e.c, sid, "tasks/cancel", map[string]any{"taskId": tk.TaskID}), -32602)
}

// TestTaskTTL: the requested ttl is reported (capped by the maximum); the
// result is kept until it elapses and purged after.
func TestTaskTTL(t *testing.T) {
	e := newEnv(t, server.Config{TaskMaxTTL: time.Minute})
	sid := e.connect(e.c)
	if tk := e.createTask(e.c, sid, 1, 0, 3600000); tk.TTL != 60000 {
		t.Fatalf("ttl above the maximum: %+v", tk)
	}
	tk := e.createTask(e.c, sid, 1, 0, 5000)
	if tk.TTL != 5000 {
		t.Fatalf("ttl: %+v", tk)
	}
	e.rpc(e.c, sid, "tasks/result", map[string]any{"taskId": tk.TaskID})
	e.clock.Step(4 * time.Second)
	if m := e.rpc(e.c, sid, "tasks/result", map[string]any{"taskId": tk.TaskID}); m.Error != nil {
		t.Fatalf("result within ttl: %v", m.Error)
	}
	e.clock.Step(2 * time.Second)
	expectCode(t, "tasks/get after ttl", e.rpc(e.c, sid, "tasks/get", map[string]any{"taskId": tk.TaskID}), -32602)
}
