package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// scripted is a small MCP server whose answers a test writes: initialize
// makes sessions S1, S2, ...; every other request is answered by answer.
// It records every request.
type scripted struct {
	t   *testing.T
	url string
	// answer returns a request's result or error; nil means {}.
	answer func(r *http.Request, sid, method string, params json.RawMessage) (any, *client.RPCError)
	// get serves GET; nil answers 405 (no standalone stream).
	get func(w http.ResponseWriter, r *http.Request)
	// post serves a POST in place of the JSON answer when it returns true.
	post func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool

	mu       sync.Mutex
	sessions int
	reqs     []seenRequest
	init     json.RawMessage // the last initialize's params
	lastCall string          // the last tools/call's id
}

func newScripted(t *testing.T) *scripted {
	s := &scripted{t: t}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	s.url = hs.URL
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	sr := seenRequest{Method: r.Method, Session: sid, Version: r.Header.Get("Mcp-Protocol-Version"), LastEventID: r.Header.Get("Last-Event-ID")}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // for post to read again
		json.Unmarshal(body, &msg)
		sr.RPC = msg.Method
		if msg.Method == "tools/call" {
			s.mu.Lock()
			json.Unmarshal(msg.ID, &s.lastCall)
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, sr)
	s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if s.get == nil {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		s.get(w, r)
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	}
	switch {
	case msg.Method == "initialize" && sid == "":
		s.mu.Lock()
		s.init = msg.Params
		s.sessions++
		sid = fmt.Sprintf("S%d", s.sessions)
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		writeJSON(w, msg.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "scripted", "version": "0"}}, nil)
	case len(msg.ID) == 0:
		w.WriteHeader(http.StatusAccepted)
	case s.post != nil && s.post(w, r, sid, msg.Method, msg.ID):
	default:
		res, rpcErr := any(map[string]any{}), (*client.RPCError)(nil)
		if s.answer != nil {
			if got, e := s.answer(r, sid, msg.Method, msg.Params); got != nil || e != nil {
				res, rpcErr = got, e
			}
		}
		writeJSON(w, msg.ID, res, rpcErr)
	}
}

func writeJSON(w http.ResponseWriter, id json.RawMessage, result any, rpcErr *client.RPCError) {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		m["error"] = rpcErr
	} else {
		m["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(m)
}

// requests returns the recorded requests that match.
func (s *scripted) requests(match func(seenRequest) bool) []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []seenRequest
	for _, r := range s.reqs {
		if match == nil || match(r) {
			out = append(out, r)
		}
	}
	return out
}

func rpc(method string) func(seenRequest) bool {
	return func(r seenRequest) bool { return r.RPC == method }
}

// options returns client options for s with short delays and a recorder.
func (s *scripted) options(rec *recorder) client.Options {
	hc := &http.Client{}
	s.t.Cleanup(hc.CloseIdleConnections)
	o := client.Options{URL: s.url, HTTPClient: hc, ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 50 * time.Millisecond, Logger: testLogger()}
	if rec != nil {
		o.OnStatus, o.OnNotification = rec.status, rec.notify
	}
	return o
}

// sseEvent writes one SSE event and flushes it.
func sseEvent(w http.ResponseWriter, id, data string) {
	if id != "" {
		fmt.Fprintf(w, "id: %s\n", id)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
}

func progressJSON(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`, i)
}
