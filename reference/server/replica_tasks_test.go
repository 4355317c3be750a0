package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// replicaTask sends one task request on c and returns its message.
func replicaTask(t *testing.T, c *wire.Client, sid, method string, params map[string]any) wire.Message {
	t.Helper()
	resp, err := c.Call(testCtx(t), sid, method, params)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("%s: %v %v", method, resp, err)
	}
	m, err := resp.Result()
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return m
}

func replicaTaskOf(t *testing.T, what string, m wire.Message) taskWire {
	t.Helper()
	var tk taskWire
	if m.Error != nil || json.Unmarshal(m.Result, &tk) != nil || tk.TaskID == "" {
		t.Fatalf("%s: %+v %s", what, m.Error, m.Result)
	}
	return tk
}

// replicaCreate runs long_operation as a task on c.
func replicaCreate(t *testing.T, c *wire.Client, sid string, steps, intervalMS int) string {
	t.Helper()
	p := wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": intervalMS}, "")
	p["task"] = map[string]any{}
	m := replicaTask(t, c, sid, "tools/call", p)
	var res struct {
		Task taskWire `json:"task"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Task.TaskID == "" {
		t.Fatalf("CreateTaskResult: %+v %s", m.Error, m.Result)
	}
	return res.Task.TaskID
}

func withBearer(c *wire.Client, token string) *wire.Client {
	c.Header.Set("Authorization", "Bearer "+token)
	return c
}

// TestReplicasShareTasks: a task created on A is read, listed, waited on
// and cancelled on B, where another principal reaches none of it.
func TestReplicasShareTasks(t *testing.T) {
	cfg := replicaConfig()
	cfg.BearerTokens = map[string]string{"tok-a": "alice", "tok-m": "mallory"}
	rs := replicas(t, 2, cfg)
	ctx := testCtx(t)
	a, b := withBearer(rs[0].client(t), "tok-a"), withBearer(rs[1].client(t), "tok-a")
	mallory := withBearer(rs[1].client(t), "tok-m")
	sid := connectOn(t, ctx, a)
	msid := connectOn(t, ctx, mallory)

	id := replicaCreate(t, a, sid, 3, 150)
	arg := map[string]any{"taskId": id}
	if got := replicaTaskOf(t, "tasks/get on B", replicaTask(t, b, sid, "tasks/get", arg)); got.Status != "working" {
		t.Fatalf("tasks/get on B: %+v, want working", got)
	}
	if m := replicaTask(t, b, sid, "tasks/list", map[string]any{}); m.Error != nil || !strings.Contains(string(m.Result), id) {
		t.Fatalf("tasks/list on B: %+v %s", m.Error, m.Result)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		expectCode(t, "mallory's "+method+" on B", replicaTask(t, mallory, msid, method, arg), -32602)
	}
	if m := replicaTask(t, mallory, msid, "tasks/list", map[string]any{}); m.Error != nil || strings.Contains(string(m.Result), id) {
		t.Fatalf("mallory's tasks/list: %+v %s", m.Error, m.Result)
	}
	// tasks/result on B blocks until the task running on A completes.
	m := replicaTask(t, b, sid, "tasks/result", arg)
	if m.Error != nil || !strings.Contains(string(m.Result), "completed 3 steps") || !strings.Contains(string(m.Result), tasks.RelatedTaskMeta) {
		t.Fatalf("tasks/result on B: %+v %s", m.Error, m.Result)
	}
	if got := replicaTaskOf(t, "tasks/get on A", replicaTask(t, a, sid, "tasks/get", arg)); got.Status != "completed" {
		t.Fatalf("tasks/get on A after the result: %+v", got)
	}

	// A task running on A is cancelled from B; A stops it and keeps it so.
	long := replicaCreate(t, a, sid, 100, 100)
	larg := map[string]any{"taskId": long}
	if got := replicaTaskOf(t, "tasks/cancel on B", replicaTask(t, b, sid, "tasks/cancel", larg)); got.Status != "cancelled" {
		t.Fatalf("tasks/cancel on B: %+v", got)
	}
	if got := replicaTaskOf(t, "tasks/get on A", replicaTask(t, a, sid, "tasks/get", larg)); got.Status != "cancelled" {
		t.Fatalf("tasks/get on A after the cancel on B: %+v", got)
	}
	expectCode(t, "tasks/cancel of the cancelled task on A", replicaTask(t, a, sid, "tasks/cancel", larg), -32602)
	expectCode(t, "tasks/result of the cancelled task on A", replicaTask(t, a, sid, "tasks/result", larg), -32600)
}

// TestTaskSurvivesRestartOnRedis: with a Redis store a restart keeps the
// tasks: a completed one keeps its result, one that was running is failed
// with a message saying why.
func TestTaskSurvivesRestartOnRedis(t *testing.T) {
	rs := replicas(t, 1, replicaConfig())
	ctx := testCtx(t)
	c := rs[0].client(t)
	sid := connectOn(t, ctx, c)
	done := replicaCreate(t, c, sid, 1, 0)
	if m := replicaTask(t, c, sid, "tasks/result", map[string]any{"taskId": done}); m.Error != nil {
		t.Fatalf("tasks/result: %+v", m.Error)
	}
	running := replicaCreate(t, c, sid, 100, 100)
	if err := rs[0].h.Restart(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.CloseIdleConnections()
	nsid := connectOn(t, ctx, c)
	if got := replicaTaskOf(t, "tasks/get after the restart", replicaTask(t, c, nsid, "tasks/get", map[string]any{"taskId": done})); got.Status != "completed" {
		t.Fatalf("completed task after the restart: %+v", got)
	}
	if m := replicaTask(t, c, nsid, "tasks/result", map[string]any{"taskId": done}); m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") {
		t.Fatalf("tasks/result after the restart: %+v %s", m.Error, m.Result)
	}
	m := replicaTask(t, c, nsid, "tasks/get", map[string]any{"taskId": running})
	if got := replicaTaskOf(t, "running task after the restart", m); got.Status != "failed" || !strings.Contains(string(m.Result), tasks.ShutdownMessage) {
		t.Fatalf("running task after the restart: %s, want failed with %q", m.Result, tasks.ShutdownMessage)
	}
}
