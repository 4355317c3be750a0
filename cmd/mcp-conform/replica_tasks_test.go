package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// TestReplicaKilledTask: a task running on replica A when A is killed
// (SIGKILL) is reported failed on replica B once A's lease lapses: a
// waiting tasks/result is answered with -32603, tasks/get says why.
func TestReplicaKilledTask(t *testing.T) {
	ctx, a, b, cmdA := servedReplicas(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rpc := func(c *wire.Client, method string, params map[string]any) wire.Message {
		t.Helper()
		resp, err := c.Call(ctx, sid, method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		m, err := resp.Result()
		if err != nil {
			t.Fatalf("%s: %v (%s)", method, err, resp.Body)
		}
		return m
	}
	p := wire.ToolParams("long_operation", map[string]any{"steps": 300, "interval_ms": 100}, "")
	p["task"] = map[string]any{}
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if m := rpc(a, "tools/call", p); m.Error != nil || json.Unmarshal(m.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("CreateTaskResult on A: %+v %s", m.Error, m.Result)
	}
	arg := map[string]any{"taskId": created.Task.TaskID}
	if m := rpc(b, "tasks/get", arg); m.Error != nil || !strings.Contains(string(m.Result), `"working"`) {
		t.Fatalf("tasks/get on B before the kill: %+v %s", m.Error, m.Result)
	}
	cmdA.Process.Kill()
	m := rpc(b, "tasks/result", arg)
	if m.Error == nil || m.Error.Code != -32603 || !strings.Contains(m.Error.Message, "lease lapsed") {
		t.Fatalf("tasks/result on B after A was killed: %+v %s, want -32603 (replica lost)", m.Error, m.Result)
	}
	if m := rpc(b, "tasks/get", arg); m.Error != nil || !strings.Contains(string(m.Result), `"failed"`) || !strings.Contains(string(m.Result), tasks.LostMessage) {
		t.Fatalf("tasks/get on B after A was killed: %+v %s", m.Error, m.Result)
	}
}

// TestE2ETaskRestartOnRedis: TASK-RESTART against `serve --store redis://`
// run by --server-cmd sees the task survive the restart (the durable
// case; in memory it sees -32602).
func TestE2ETaskRestartOnRedis(t *testing.T) {
	skipShort(t, "builds the binary and restarts a served reference")
	t.Parallel()
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildCLI(t)
	rs := redistest.Start(t)
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runSelf(t, suiteTimeout, "server",
		"--server-cmd", fmt.Sprintf("%q serve --addr 127.0.0.1:{port} --store %s --bearer-token alice=alice-token --bearer-token bob=bob-token "+
			"--reaper-interval 200ms --idle-threshold 1s --grace-period 1s --event-max-age 3s --event-cleanup-interval 250ms --log-level warn", exe, rs.URL(0)),
		"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", profile,
		"--focus", "^TASK-RESTART:", "--json", js, "--suggest-profile", "")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range readRun(t, js).Checks {
		if c.ID != "TASK-RESTART" {
			continue
		}
		if c.Verdict != report.Pass {
			t.Fatalf("TASK-RESTART: %s %s", c.Verdict, c.Message)
		}
		for _, e := range c.Timeline {
			if strings.Contains(e.Text, "survived the restart") {
				return
			}
		}
		t.Fatalf("TASK-RESTART passed without seeing the task survive:\n%s", out)
	}
	t.Fatal("TASK-RESTART did not run")
}
