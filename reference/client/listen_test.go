package client_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// TestListenAgainAfterCut: a listen stream that ends without the
// subscription's completion response is listened again, with a new
// request for the same filter; the new stream's notifications reach the
// application, and its completion response ends Listen without error.
func TestListenAgainAfterCut(t *testing.T) {
	s := newModernServer(t)
	var listens atomic.Int32
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		if m.Method != "subscriptions/listen" {
			return false
		}
		ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`
		sseHeader(w)
		sseEvent(w, "", ack)
		if listens.Add(1) == 1 {
			return true // cut: no completion response
		}
		sseEvent(w, "", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`)
		sseEvent(w, "", `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"resultType":"complete"}}`)
		return true
	}
	var mu sync.Mutex
	var got []client.Notification
	o := s.options()
	o.OnNotification = func(n client.Notification) {
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	}
	c := connectTo(t, o)
	if err := c.Listen(ctx(t), client.ListenFilter{ToolsListChanged: true}); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	reqs := s.requests("subscriptions/listen")
	if len(reqs) != 2 || string(reqs[0].ID) == string(reqs[1].ID) {
		t.Fatalf("want two listen requests with different ids, got %d: %+v", len(reqs), reqs)
	}
	var f map[string]bool
	if !reqs[1].arg("notifications", &f) || !f["toolsListChanged"] {
		t.Fatalf("the second listen's filter: %s", reqs[1].Params["notifications"])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Method != "notifications/tools/list_changed" || got[0].Stream != "listen" || got[0].RequestID != strings.Trim(string(reqs[1].ID), `"`) {
		t.Fatalf("notifications handed over: %+v", got)
	}
}

// TestListenRefused: a listen the server refuses is an error, not a
// reason to listen again.
func TestListenRefused(t *testing.T) {
	s := newModernServer(t)
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		if m.Method != "subscriptions/listen" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "bad filter"}})
		return true
	}
	c := connectTo(t, s.options())
	err := c.Listen(ctx(t), client.ListenFilter{ToolsListChanged: true})
	var rpc *client.RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 {
		t.Fatalf("Listen: %v, want the -32602", err)
	}
	if n := len(s.requests("subscriptions/listen")); n != 1 {
		t.Fatalf("%d listen requests, want 1", n)
	}
	if err := c.Listen(ctx(t), client.ListenFilter{}); err == nil {
		t.Fatal("an empty filter was listened for")
	}
}
