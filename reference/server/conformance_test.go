package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/tools"
)

// toolNames lists the tools the server offers a new session.
func (e *env) toolNames() []string {
	e.t.Helper()
	sid := e.connect(e.c)
	resp, err := e.c.Call(e.ctx(), sid, "tools/list", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := resp.Result()
	if err != nil || m.Error != nil {
		e.t.Fatalf("tools/list: %v %v", err, m.Error)
	}
	var list struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(m.Result, &list); err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestConformanceTools: the official suite's fixtures are served only when
// asked for; the reference's own tools stay as they are either way.
func TestConformanceTools(t *testing.T) {
	own := slices.Sorted(slices.Values(tools.Names))
	if got := newEnv(t, noKeepAlive).toolNames(); !slices.Equal(got, own) {
		t.Fatalf("tools %v, want %v", got, own)
	}
	cfg := noKeepAlive
	cfg.ConformanceTools = true
	got := newEnv(t, cfg).toolNames()
	for _, name := range append(own, "test_simple_text", "test_reconnection", "json_schema_2020_12_tool") {
		if !slices.Contains(got, name) {
			t.Errorf("with ConformanceTools: %s missing from %v", name, got)
		}
	}
}

// TestSSEPolling: test_reconnection closes its call's stream on purpose
// after the priming event and a retry hint, even when the request names an
// older supported revision than the session's (the session's decides), and
// the stream resumed with Last-Event-ID yields the result.
func TestSSEPolling(t *testing.T) {
	cfg := noKeepAlive
	cfg.ConformanceTools = true
	e := newEnv(t, cfg)
	sid := e.connect(e.c)
	c := e.client()
	c.ProtocolVersion = "2025-03-26"
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, c.Request("tools/call", wire.ToolParams("test_reconnection", map[string]any{}, "")))
	if err != nil {
		t.Fatal(err)
	}
	post, err := c.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	retry := false
	for {
		ev, err := post.Next()
		if err != nil {
			break
		}
		if ev.Data != "" {
			t.Fatalf("the closed stream carried %q", ev.Data)
		}
		retry = retry || ev.HasRetry
		if ev.HasID {
			last = ev.ID
		}
	}
	if last == "" || !retry {
		t.Fatalf("closed stream: last id %q, retry field %v; want a priming event and a retry", last, retry)
	}
	if got := describe(t, messages(t, e.openStream(c, sid, last))); got != "result Reconnection test completed successfully" {
		t.Fatalf("resumed: %s", got)
	}
}
