package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// waitResult sends tasks/result for id on c in the background; the answer
// comes on the channel.
func waitResult(ctx context.Context, c *wire.Client, sid, id string) <-chan *wire.Response {
	out := make(chan *wire.Response, 1)
	go func() {
		resp, err := c.Call(ctx, sid, "tasks/result", map[string]any{"taskId": id})
		if err != nil {
			resp = &wire.Response{Status: -1, Body: []byte(err.Error())}
		}
		out <- resp
	}()
	return out
}

// interrupted checks the answer of a tasks/result whose wait was ended:
// HTTP status, a JSON-RPC error with the request's id (the wire client
// numbers from 1), its code and a data.reason.
func interrupted(t *testing.T, what string, got <-chan *wire.Response, status, code int, reason string) {
	t.Helper()
	var resp *wire.Response
	select {
	case resp = <-got:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: tasks/result still waiting", what)
	}
	var m struct {
		ID    json.RawMessage
		Error *struct {
			Code    int
			Message string
			Data    struct{ Reason, TaskID string }
		}
	}
	if resp.Status != status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(resp.Body, &m) != nil || m.Error == nil {
		t.Fatalf("%s: HTTP %d %q %q; want %d with a JSON-RPC error", what, resp.Status, resp.Header.Get("Content-Type"), resp.Body, status)
	}
	if m.Error.Code != code || m.Error.Data.Reason != reason || len(m.ID) == 0 || string(m.ID) == "null" || m.Error.Data.TaskID == "" {
		t.Fatalf("%s: %s; want code %d, reason %q, the request's id and the task id", what, resp.Body, code, reason)
	}
	if status == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%s: 503 without Retry-After", what)
	}
}

// TestTaskResultInterrupted: a tasks/result waiting when its session is
// deleted, or when the server shuts down, is answered with a JSON-RPC
// error that says so, never with an empty body.
func TestTaskResultInterrupted(t *testing.T) {
	t.Run("deleted", func(t *testing.T) {
		e := newEnv(t, server.Config{})
		sid := e.connect(e.c)
		tk := e.createTask(e.c, sid, 1, 60000, nil)
		waiter := e.client()
		got := waitResult(e.ctx(), waiter, sid, tk.TaskID)
		eventually(t, "tasks/result waiting", func() bool { return e.srv.InFlight() > 0 })
		if resp := e.do(e.c, http.MethodDelete, sid, nil); resp.Status != http.StatusNoContent {
			t.Fatalf("DELETE: %d", resp.Status)
		}
		interrupted(t, "tasks/result when its session is deleted", got, http.StatusNotFound, server.CodeSessionExpired, "session_ended")
		// The task is the principal's: it goes on.
		nsid := e.connect(e.c)
		if got := e.task(e.rpc(e.c, nsid, "tasks/get", map[string]any{"taskId": tk.TaskID})); got.Status != "working" {
			t.Fatalf("task after its session was deleted: %+v", got)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		e := newEnv(t, server.Config{})
		sid := e.connect(e.c)
		tk := e.createTask(e.c, sid, 1, 60000, nil)
		got := waitResult(e.ctx(), e.client(), sid, tk.TaskID)
		eventually(t, "tasks/result waiting", func() bool { return e.srv.InFlight() > 0 })
		e.srv.Close()
		interrupted(t, "tasks/result at shutdown", got, http.StatusServiceUnavailable, server.CodeInternalError, "server_shutdown")
	})
}

// TestTaskResultInterruptedOnRedis: the same on a shared store, the wait
// on another replica than the DELETE, and at a replica's shutdown.
func TestTaskResultInterruptedOnRedis(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	id := replicaCreate(t, a, sid, 1, 60000)
	got := waitResult(ctx, rs[1].client(t), sid, id)
	eventually(t, "tasks/result waiting on B", func() bool { return rs[1].h.Server().InFlight() > 0 })
	if resp, err := a.Delete(ctx, sid); err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE on A: %v %v", resp, err)
	}
	interrupted(t, "tasks/result on B when the session is deleted on A", got, http.StatusNotFound, server.CodeSessionExpired, "session_ended")

	sid = connectOn(t, ctx, b)
	got = waitResult(ctx, rs[1].client(t), sid, id)
	eventually(t, "tasks/result waiting on B", func() bool { return rs[1].h.Server().InFlight() > 0 })
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go rs[1].h.Shutdown(sctx)
	interrupted(t, "tasks/result when B shuts down", got, http.StatusServiceUnavailable, server.CodeInternalError, "server_shutdown")
	// The task runs on A and is not B's to end.
	m := replicaTask(t, a, connectOn(t, ctx, a), "tasks/get", map[string]any{"taskId": id})
	if tk := replicaTaskOf(t, "tasks/get on A", m); tk.Status != "working" || strings.Contains(string(m.Result), "shut down") {
		t.Fatalf("task after B shut down: %s", m.Result)
	}
}
