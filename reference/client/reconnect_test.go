package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	tools, err := c.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func counter(t *testing.T, c *client.Client) string {
	t.Helper()
	r, err := c.CallTool(ctx(t), "counter_increment", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Result.Content[0].(*mcp.TextContent).Text
}

// TestReconnect covers CLI-RECONNECT in both modes: a restarted client with
// the stored session rejoins it with the stored token only (the server
// requires one; the new client is given none), sends the negotiated
// MCP-Protocol-Version, opens the GET stream and sees the same tools and
// the same session state.
func TestReconnect(t *testing.T) {
	for _, mode := range []client.ReconnectMode{client.Reinitialize, client.Reuse} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, server.Config{BearerTokens: map[string]string{"tok-a": "alice"}})
			st := storage.NewMemory()
			o := e.options(st, nil)
			o.BearerToken = "tok-a"
			a := e.newClient(o)
			sid, before := a.SessionID(), toolNames(t, a)
			counter(t, a)
			a.Close()

			rec := &recorder{}
			o = e.options(st, rec)
			o.Reconnect = mode
			mark := len(e.reqs.all())
			b := e.newClient(o)
			if b.SessionID() != sid {
				t.Fatalf("session %s, want the stored %s", b.SessionID(), sid)
			}
			if got := rec.trail(); got != "reconnecting connected(reconnected)" {
				t.Fatalf("status trail %q", got)
			}
			if got := toolNames(t, b); !slices.Equal(got, before) {
				t.Fatalf("tools %v, want %v", got, before)
			}
			if got := counter(t, b); got != "2" {
				t.Fatalf("counter %s, want 2: not the same session", got)
			}
			eventually(t, "the GET stream", func() bool {
				return slices.ContainsFunc(e.reqs.all()[mark:], func(r seenRequest) bool { return r.Method == http.MethodGet && r.Session == sid })
			})
			inits := 0
			for _, r := range e.reqs.all()[mark:] {
				if r.Session != sid || r.Version != "2025-11-25" {
					t.Fatalf("request %+v: want the stored session and the negotiated version", r)
				}
				if r.RPC == "initialize" {
					inits++
				}
			}
			if want := map[client.ReconnectMode]int{client.Reinitialize: 1, client.Reuse: 0}[mode]; inits != want {
				t.Fatalf("%d initializes, want %d", inits, want)
			}
		})
	}
}

// TestReconnectFallsBack: against the Go SDK's own server, which refuses a
// second initialize, reinit falls back to reuse; against a server that
// wants an initialize, reuse falls back to reinit.
func TestReconnectFallsBack(t *testing.T) {
	t.Run("reinit refused", func(t *testing.T) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "stock", Version: "0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		st := storage.NewMemory()
		o := client.Options{URL: hs.URL, Storage: st, ReconnectDelay: 10 * time.Millisecond, MaxReconnectDelay: 50 * time.Millisecond, HTTPClient: &http.Client{}, Logger: testLogger()}
		a := connectTo(t, o)
		sid := a.SessionID()
		a.Close()
		o.Reconnect, o.HTTPClient = client.Reinitialize, &http.Client{}
		b := connectTo(t, o)
		if b.SessionID() != sid {
			t.Fatalf("session %s, want %s", b.SessionID(), sid)
		}
		r, err := b.CallTool(ctx(t), "echo", map[string]any{"text": "reused"})
		if err != nil || r.Result.Content[0].(*mcp.TextContent).Text != "reused" {
			t.Fatalf("call after the fallback: %v", err)
		}
	})
	t.Run("reuse refused", func(t *testing.T) {
		s := newScripted(t)
		var reinitialized atomic.Bool
		s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
			switch {
			case method == "initialize" && sid != "":
				reinitialized.Store(true)
				w.Header().Set("Mcp-Session-Id", sid)
				writeJSON(w, id, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "s", "version": "0"}}, nil)
				return true
			case method == "ping" && !reinitialized.Load():
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Server not initialized"}}`))
				return true
			}
			return false
		}
		st := storage.NewMemory()
		o := s.options(nil)
		o.Storage = st
		connectTo(t, o).Close()
		o.Reconnect = client.Reuse
		b := connectTo(t, o)
		if b.SessionID() != "S1" || !reinitialized.Load() {
			t.Fatalf("session %s, re-initialized %v; want S1 re-initialized", b.SessionID(), reinitialized.Load())
		}
	})
}

// TestFallback covers CLI-FALLBACK: a stored session the server no longer
// knows, or one bound to a token that is no longer stored, is dropped and a
// new session started, without the user doing anything.
func TestFallback(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		e := newEnv(t, server.Config{})
		st := storage.NewMemory()
		a := e.newClient(e.options(st, nil))
		old := a.SessionID()
		a.Close()
		e.expire()
		rec := &recorder{}
		b := e.newClient(e.options(st, rec))
		if b.SessionID() == old || b.SessionID() == "" {
			t.Fatalf("session %q after the stored one expired", b.SessionID())
		}
		if got, _ := st.Get(client.KeySessionID); got != b.SessionID() {
			t.Fatalf("stored session %q, want the new %q", got, b.SessionID())
		}
		if got := rec.trail(); got != "reconnecting connecting connected" {
			t.Fatalf("status trail %q", got)
		}
		toolNames(t, b)
	})
	t.Run("no stored token", func(t *testing.T) {
		e := newEnv(t, server.Config{})
		st := storage.NewMemory()
		o := e.options(st, nil)
		o.BearerToken = "tok"
		a := e.newClient(o)
		old := a.SessionID()
		a.Close()
		st.Remove(client.KeyBearerToken)
		mark := len(e.reqs.all())
		b := e.newClient(e.options(st, nil))
		if b.SessionID() == old {
			t.Fatal("rejoined a token-bound session without its token")
		}
		for _, r := range e.reqs.all()[mark:] {
			if r.Session == old {
				t.Fatalf("the old session was used: %+v", r)
			}
		}
	})
}
