package server_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestOtherPathsJSON: a request for any path but the MCP endpoint gets 404
// with a JSON-RPC error naming the endpoint, not the HTTP mux's plain text.
func TestOtherPathsJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHost(server.ShortTimings(), ln, server.HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	base := strings.TrimSuffix(h.URL(), "/mcp")
	for _, req := range []struct{ method, path string }{{"GET", "/"}, {"POST", "/other"}, {"GET", "/mcp/x"}, {"DELETE", "/.well-known/oauth-protected-resource"}} {
		r, err := http.NewRequest(req.method, base+req.path, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct {
			Error *struct{ Message string }
		}
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil || m.Error == nil || !strings.Contains(m.Error.Message, "/mcp") {
			t.Errorf("%s %s: HTTP %d %q %s; want 404 with a JSON-RPC error naming /mcp", req.method, req.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
}
