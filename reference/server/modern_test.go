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

const modern = "2026-07-28"

// modernMeta is the per-request _meta of the sessionless revision,
// declaring the tasks extension if tasks is set.
func modernMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modern,
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
}

// modernCall sends a 2026-07-28 request (Mcp-Name set if name is not
// empty) and returns the HTTP status and the answer.
func (e *env) modernCall(c *wire.Client, method string, params map[string]any, declare bool, name string) (int, wire.Message) {
	e.t.Helper()
	params["_meta"] = modernMeta(declare)
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodPost, "", c.Request(method, params))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok && name == "" {
		name = n
	}
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	m, err := resp.Result()
	if err != nil {
		e.t.Fatalf("%s: HTTP %d: %v", method, resp.Status, err)
	}
	return resp.Status, m
}

type modernTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

func (e *env) modernTaskOf(status int, m wire.Message) modernTask {
	e.t.Helper()
	if status != http.StatusOK || m.Error != nil {
		e.t.Fatalf("HTTP %d, error %v", status, m.Error)
	}
	var t modernTask
	if err := json.Unmarshal(m.Result, &t); err != nil {
		e.t.Fatal(err)
	}
	return t
}

func modernCode(t *testing.T, what string, status int, m wire.Message, wantStatus, wantCode int) {
	t.Helper()
	if status != wantStatus || m.Error == nil || m.Error.Code != wantCode {
		t.Fatalf("%s: HTTP %d error %v result %s; want HTTP %d error %d", what, status, m.Error, m.Result, wantStatus, wantCode)
	}
}

// TestModernTasks: the io.modelcontextprotocol/tasks extension under
// 2026-07-28, without a session.
func TestModernTasks(t *testing.T) {
	e, alice, mallory := twoPrincipals(t)
	status, m := e.modernCall(alice, "server/discover", map[string]any{}, false, "")
	if status != http.StatusOK || !strings.Contains(string(m.Result), `"io.modelcontextprotocol/tasks"`) {
		t.Fatalf("server/discover: HTTP %d %v %s", status, m.Error, m.Result)
	}
	call := map[string]any{"name": "long_operation", "arguments": map[string]any{"steps": 1, "interval_ms": 1000}}
	tk := e.modernTaskOf(e.modernCall(alice, "tools/call", call, true, ""))
	if tk.ResultType != "task" || tk.Status != "working" || tk.TTLMs <= 0 || tk.PollIntervalMs <= 0 {
		t.Fatalf("CreateTaskResult: %+v", tk)
	}
	id := map[string]any{"taskId": tk.TaskID}
	if got := e.modernTaskOf(e.modernCall(alice, "tasks/get", id, true, tk.TaskID)); got.Status != "working" || got.Result != nil {
		t.Fatalf("tasks/get while working: %+v", got)
	}
	s, m := e.modernCall(alice, "tasks/get", id, false, tk.TaskID)
	modernCode(t, "tasks/get undeclared", s, m, http.StatusBadRequest, -32021)
	if !strings.Contains(string(m.Error.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Fatalf("-32021 data %s: want requiredCapabilities naming the extension", m.Error.Data)
	}
	s, m = e.modernCall(alice, "tasks/get", id, true, "other")
	modernCode(t, "tasks/get with a wrong Mcp-Name", s, m, http.StatusBadRequest, -32020)
	for _, method := range []string{"tasks/result", "tasks/list"} {
		s, m = e.modernCall(alice, method, map[string]any{"taskId": tk.TaskID}, true, tk.TaskID)
		modernCode(t, method, s, m, http.StatusNotFound, -32601)
	}
	s, m = e.modernCall(mallory, "tasks/get", id, true, tk.TaskID)
	modernCode(t, "mallory's tasks/get", s, m, http.StatusOK, -32602)
	s, m = e.modernCall(alice, "tasks/get", map[string]any{"taskId": "unknown"}, true, "unknown")
	modernCode(t, "tasks/get of an unknown id", s, m, http.StatusOK, -32602)

	e.awaitTimer()
	e.clock.Step(time.Second)
	eventually(t, "the task to complete", func() bool {
		got := e.modernTaskOf(e.modernCall(alice, "tasks/get", id, true, tk.TaskID))
		return got.Status == "completed" && strings.Contains(string(got.Result), "completed 1 steps")
	})
	for range 2 { // idempotent, also on a finished task
		if s, m := e.modernCall(alice, "tasks/cancel", id, true, tk.TaskID); s != http.StatusOK || m.Error != nil || string(m.Result) != `{"resultType":"complete"}` {
			t.Fatalf("tasks/cancel: HTTP %d %v %s", s, m.Error, m.Result)
		}
	}
	if got := e.modernTaskOf(e.modernCall(alice, "tasks/get", id, true, tk.TaskID)); got.Status != "completed" {
		t.Fatalf("a cancel changed a completed task: %+v", got)
	}
	working := e.modernTaskOf(e.modernCall(alice, "tools/call", call, true, ""))
	wid := map[string]any{"taskId": working.TaskID}
	e.modernCall(alice, "tasks/cancel", wid, true, working.TaskID)
	if got := e.modernTaskOf(e.modernCall(alice, "tasks/get", wid, true, working.TaskID)); got.Status != "cancelled" {
		t.Fatalf("cancelled task: %+v", got)
	}
}

// TestModernTransport: 2026-07-28 has no sessions: GET and DELETE get
// 405, a stray Mcp-Session-Id is ignored, and an undeclared client's call
// is an ordinary call.
func TestModernTransport(t *testing.T) {
	e := newEnv(t, server.Config{})
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := e.c.NewHTTPRequest(e.ctx(), method, "stray-session", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Protocol-Version", modern)
		resp, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusMethodNotAllowed {
			t.Fatalf("%s: HTTP %d", method, resp.Status)
		}
	}
	params := map[string]any{"name": "long_operation", "arguments": map[string]any{"steps": 1, "interval_ms": 0}, "_meta": modernMeta(false)}
	req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, "stray-session", e.c.Request("tools/call", params))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "long_operation")
	resp, err := e.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := resp.Result()
	if err != nil || m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") || strings.Contains(string(m.Result), `"resultType":"task"`) {
		t.Fatalf("undeclared tools/call with a stray session id: HTTP %d %v %v %s", resp.Status, err, m.Error, m.Result)
	}
}
