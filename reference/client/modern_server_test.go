package client_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// modernServer is a small 2026-07-28 server whose answers a test writes:
// server/discover and tools/list are answered unless handle takes them;
// every request is recorded whole.
type modernServer struct {
	t   *testing.T
	url string
	// tools is the tools/list answer.
	tools []map[string]any
	// handle answers a request and returns true, or leaves it to the
	// defaults (a {} result) with false.
	handle func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool

	mu   sync.Mutex
	reqs []*modernRequest
}

// modernRequest is one request as the server saw it.
type modernRequest struct {
	ID     json.RawMessage
	Method string
	Params map[string]json.RawMessage
	Header http.Header
}

// arg returns params.NAME decoded into v.
func (m *modernRequest) arg(name string, v any) bool {
	raw, ok := m.Params[name]
	return ok && json.Unmarshal(raw, v) == nil
}

func newModernServer(t *testing.T) *modernServer {
	s := &modernServer{t: t}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	s.url = hs.URL + "/mcp"
	return s
}

func (s *modernServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	m := &modernRequest{Header: r.Header.Clone()}
	var body struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	m.ID, m.Method, m.Params = body.ID, body.Method, body.Params
	s.mu.Lock()
	s.reqs = append(s.reqs, m)
	s.mu.Unlock()
	if s.handle != nil && s.handle(w, r, m) {
		return
	}
	switch m.Method {
	case "server/discover":
		writeJSON(w, m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{client.ModernProtocolVersion}, "capabilities": map[string]any{"tools": map[string]any{}}}, nil)
	case "tools/list":
		writeJSON(w, m.ID, map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": s.tools}, nil)
	default:
		writeJSON(w, m.ID, map[string]any{"resultType": "complete", "content": []any{}}, nil)
	}
}

// requests returns the recorded requests of one method.
func (s *modernServer) requests(method string) []*modernRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*modernRequest
	for _, m := range s.reqs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// options returns client options for s speaking 2026-07-28.
func (s *modernServer) options() client.Options {
	hc := &http.Client{}
	s.t.Cleanup(hc.CloseIdleConnections)
	return client.Options{URL: s.url, HTTPClient: hc, ProtocolVersion: client.ModernProtocolVersion,
		ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 50 * time.Millisecond, Logger: testLogger()}
}

// writeError answers with a JSON-RPC error and an HTTP status.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, e client.RPCError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}
