package wire

import (
	"context"
	"net/http"
	"testing"
)

// TestStatelessSendsVersion: against a target that issues no session ids,
// every request after initialize carries MCP-Protocol-Version although it
// carries no Mcp-Session-Id; initialize carries none. Without Stateless a
// request without a session id carries none, as before.
func TestStatelessSendsVersion(t *testing.T) {
	c := New("http://127.0.0.1/mcp")
	c.ProtocolVersion = "2025-11-25"
	bodies := []struct {
		name string
		body any
		init bool
	}{
		{"initialize", c.Request("initialize", c.InitializeParams()), true},
		{"raw initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, true},
		{"notification", Notification("notifications/initialized"), false},
		{"request", c.Request("tools/list", nil), false},
		{"raw request", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false},
		{"raw bytes", []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), false},
	}
	for _, stateless := range []bool{false, true} {
		c.Stateless = stateless
		for _, b := range bodies {
			req, err := c.NewHTTPRequest(context.Background(), http.MethodPost, "", b.body)
			if err != nil {
				t.Fatal(err)
			}
			got := req.Header.Get(HeaderProtocolVersion)
			want := ""
			if stateless && !b.init {
				want = "2025-11-25"
			}
			if got != want || req.Header.Get(HeaderSessionID) != "" {
				t.Errorf("stateless=%v, %s: MCP-Protocol-Version %q, Mcp-Session-Id %q; want %q and none", stateless, b.name, got, req.Header.Get(HeaderSessionID), want)
			}
		}
	}
	get, _ := c.NewHTTPRequest(context.Background(), http.MethodGet, "", nil)
	if got := get.Header.Get(HeaderProtocolVersion); got != "2025-11-25" {
		t.Errorf("stateless GET: MCP-Protocol-Version %q", got)
	}
}
