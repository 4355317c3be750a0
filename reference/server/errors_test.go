package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestErrorsAreJSONRPC: every error answer, those the go-sdk would write
// as plain text included, is a JSON-RPC error with the right code and the
// request's id.
func TestErrorsAreJSONRPC(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	call := func(method string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": "req-7", "method": method, "params": map[string]any{}}
	}
	for _, tc := range []struct {
		name   string
		edit   func(*http.Request)
		body   any
		code   int
		wantID string
		status int // 0: 400
	}{
		{"unknown method", nil, call("no/such/method"), -32601, `"req-7"`, 0},
		{"batch on 2025-11-25", nil, []any{call("tools/list")}, -32600, "null", 0},
		{"call without id", nil, map[string]any{"jsonrpc": "2.0", "method": "tools/list", "params": map[string]any{}}, -32600, "null", 0},
		{"no Accept", func(r *http.Request) { r.Header.Del("Accept") }, call("tools/list"), -32600, `"req-7"`, 0},
		{"two session ids", func(r *http.Request) { r.Header.Add(wire.HeaderSessionID, sid) }, call("tools/list"), -32600, "null", 0},
		{"sessionless revision, Content-Type text/plain", func(r *http.Request) {
			r.Header.Set("Content-Type", "text/plain")
			r.Header.Set(wire.HeaderProtocolVersion, "2026-07-28")
			r.Header.Del(wire.HeaderSessionID)
		}, call("tools/list"), -32600, `"req-7"`, http.StatusUnsupportedMediaType},
	} {
		if tc.status == 0 {
			tc.status = http.StatusBadRequest
		}
		req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.edit != nil {
			tc.edit(req)
		}
		resp, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code int }
			ID    json.RawMessage
		}
		if resp.Status != tc.status || resp.Header.Get("Content-Type") != "application/json" ||
			json.Unmarshal(resp.Body, &body) != nil || body.Error.Code != tc.code || string(body.ID) != tc.wantID {
			t.Errorf("%s: HTTP %d %q %s; want %d JSON-RPC error %d with id %s", tc.name, resp.Status, resp.Header.Get("Content-Type"), resp.Body, tc.status, tc.code, tc.wantID)
		}
	}
	if got := e.tool(e.c, sid, "echo", map[string]any{"text": "ok"}); got != "ok" {
		t.Fatalf("session after the errors: %q", got)
	}
}
