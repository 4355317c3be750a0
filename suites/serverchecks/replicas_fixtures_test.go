package serverchecks

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// startReplicas runs two replicas of fixture name on one Redis and returns
// a client for each (the first principal's token).
func startReplicas(t *testing.T, name string) (a, b *wire.Client) {
	t.Helper()
	f, err := servers.LookupReplicas(name)
	if err != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t)
	var cs []*wire.Client
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.Start(servers.Config(), rs.URL(0), ln)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		c := wire.New(r.URL())
		tr := &http.Transport{}
		c.HTTP = &http.Client{Transport: tr}
		c.Header.Set("Authorization", "Bearer alice-token")
		t.Cleanup(tr.CloseIdleConnections)
		cs = append(cs, c)
	}
	return cs[0], cs[1]
}

func replicaCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func status(t *testing.T, ctx context.Context, c *wire.Client, sid string) int {
	t.Helper()
	resp, err := c.Call(ctx, sid, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

func TestReplicasShareNothing(t *testing.T) {
	a, b := startReplicas(t, "replicas-share-nothing")
	ctx := replicaCtx(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(t, ctx, a, sid); got != http.StatusOK {
		t.Fatalf("A: %d", got)
	}
	if got := status(t, ctx, b, sid); got != http.StatusNotFound {
		t.Fatalf("B answered %d for A's session, want 404", got)
	}
}

// TestReplicasNoRouting: a stream resumed on B while the call runs on A
// gets what was stored then, and never the rest.
func TestReplicasNoRouting(t *testing.T) {
	a, b := startReplicas(t, "replicas-no-routing")
	ctx := replicaCtx(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post, err := a.OpenPOST(ctx, sid, a.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 5, "interval_ms": 200}, "tok")))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for range 2 { // priming event, first notification
		ev, err := post.Next()
		if err != nil {
			t.Fatal(err)
		}
		last = ev.ID
	}
	post.Close()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second) // the call ends after 1 s
	defer cancel()
	resumed, err := b.OpenGET(rctx, sid, last)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	for {
		ev, err := resumed.Next()
		if err != nil {
			return // cut by the deadline without the response: nothing routed
		}
		if m, ok := msg(ev); ok && m.IsResponse() {
			t.Fatal("the response reached replica B: live events were routed")
		}
	}
}

// TestReplicasReaperLocal: a session kept active through A is expired by B,
// which saw no activity.
func TestReplicasReaperLocal(t *testing.T) {
	a, b := startReplicas(t, "replicas-reaper-local")
	ctx := replicaCtx(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := status(t, ctx, b, sid); got != http.StatusOK {
		t.Fatalf("B: %d", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for status(t, ctx, a, sid) == http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("the session stayed alive: B did not expire it on its own view")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestReplicasReaperForgets: a silent session is never expired.
func TestReplicasReaperForgets(t *testing.T) {
	a, b := startReplicas(t, "replicas-reaper-forgets")
	ctx := replicaCtx(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := servers.Config()
	time.Sleep(cfg.IdleThreshold + cfg.GracePeriod + 3*cfg.ReaperInterval + 500*time.Millisecond)
	for _, c := range []*wire.Client{a, b} {
		if got := status(t, ctx, c, sid); got != http.StatusOK {
			t.Fatalf("silent session answered %d, want 200: it was expired", got)
		}
	}
}

// TestReplicasTaskLate: right after A's CreateTaskResult, A finds the task
// and B does not; B finds it once A has stored it.
func TestReplicasTaskLate(t *testing.T) {
	a, b := startReplicas(t, "replicas-task-late")
	ctx := replicaCtx(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := wire.ToolParams("long_operation", map[string]any{"steps": 5, "interval_ms": 200}, "")
	p["task"] = map[string]any{}
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if m := replicaRPC(t, ctx, a, sid, "tools/call", p); m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Task.TaskID == "" {
		t.Fatalf("CreateTaskResult: %v %s", m.Error, m.Result)
	}
	get := map[string]any{"taskId": res.Task.TaskID}
	if m := replicaRPC(t, ctx, a, sid, "tasks/get", get); m.Error != nil {
		t.Fatalf("tasks/get on A, which created the task: %+v", m.Error)
	}
	if m := replicaRPC(t, ctx, b, sid, "tasks/get", get); m.Error == nil || m.Error.Code != -32602 {
		t.Fatalf("tasks/get on B right after the CreateTaskResult: %+v %s, want -32602 (not stored yet)", m.Error, m.Result)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for replicaRPC(t, ctx, b, sid, "tasks/get", get).Error != nil {
		select {
		case <-ctx.Done():
			t.Fatal("B never found the task: A did not store it")
		case <-tick.C:
		}
	}
}

// replicaRPC sends one request on session sid and expects HTTP 200.
func replicaRPC(t *testing.T, ctx context.Context, c *wire.Client, sid, method string, params any) wire.Message {
	t.Helper()
	resp, err := c.Call(ctx, sid, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", method, resp.Status, resp.Body)
	}
	m, err := resp.Result()
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return m
}
