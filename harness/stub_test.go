package harness

import (
	"encoding/json"
	"net/http"
	"sync"
)

// stubMCP is a minimal MCP endpoint: it answers initialize with version
// as it is (and a session id), anything else with an empty result, and records the
// Authorization of every request.
type stubMCP struct {
	version string

	mu    sync.Mutex
	auths []string
}

func (s *stubMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	if m.Method == "initialize" {
		// The version goes out byte for byte, invalid UTF-8 included.
		result = `{"protocolVersion":"` + s.version + `","capabilities":{},"serverInfo":{"name":"stub","version":"0"}}`
		w.Header().Set("Mcp-Session-Id", "stub-session")
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

// seen returns the Authorization headers the stub got, one per request.
func (s *stubMCP) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}
