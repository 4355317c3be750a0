package client_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestEraSwitchDropsStoredSession: a client of 2026-07-28 restarted with
// a stored session of 2025-11-25, at a server now of 2026-07-28 alone,
// takes the first -32022 as the news: no re-initialize, GET or ping on
// the old session after it and no initialize at all, but server/discover
// and the call without a session id. Rejoining by reuse, the GET (a 405
// that any revision may give) is the one request allowed before it.
func TestEraSwitchDropsStoredSession(t *testing.T) {
	for _, tc := range []struct {
		mode client.ReconnectMode
		old  int // requests carrying the old session id
	}{{client.Reinitialize, 1}, {client.Auto, 1}, {client.Reuse, 2}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := newEnv(t, server.Config{})
			setEra := eraGate(e)
			setEra("legacy")
			st := storage.NewMemory()
			o := modernOptions(e, st)
			o.Reconnect = tc.mode
			c := e.newClient(o)
			if err := c.Connect(ctx(t)); err != nil {
				t.Fatalf("connect at a 2025-11-25 server: %v", err)
			}
			c.Close()
			sid, _ := st.Get(client.KeySessionID)
			if sid == "" {
				t.Fatal("no session stored at a 2025-11-25 server")
			}
			setEra("modern")
			before := len(e.reqs.all())
			c = e.newClient(o)
			defer c.Close()
			if err := c.Connect(ctx(t)); err != nil {
				t.Fatalf("connect at a server of 2026-07-28 alone: %v", err)
			}
			res, err := c.CallTool(ctx(t), "echo", map[string]any{"text": "hi"})
			if err != nil || res.Result.IsError {
				t.Fatalf("call at a server of 2026-07-28 alone: %v %+v", err, res)
			}
			after := e.reqs.all()[before:]
			old, last := 0, -1
			for i, r := range after {
				if r.Session == sid {
					old, last = old+1, i
				}
				if r.Session != "" && r.Session != sid {
					t.Errorf("a session id the server never gave: %+v", r)
				}
			}
			if old != tc.old {
				t.Errorf("%d requests carried the old session id, want %d: %+v", old, tc.old, after)
			}
			for _, r := range after[last+1:] {
				if r.RPC == "initialize" || r.RPC == "ping" || r.Method == http.MethodGet || r.Session != "" {
					t.Errorf("after the -32022 the client sent %+v to a server without sessions; all: %+v", r, after)
				}
			}
			discovers := 0
			for _, r := range after {
				if r.RPC == "server/discover" {
					discovers++
				}
			}
			if discovers != 1 || !slices.ContainsFunc(after, func(r seenRequest) bool {
				return strings.HasPrefix(r.RPC, "tools/call") && r.Version == client.ModernProtocolVersion
			}) {
				t.Errorf("want one server/discover and a tools/call of 2026-07-28: %+v", after)
			}
			if v, _ := st.Get(client.KeySessionID); v != "" {
				t.Errorf("the old session %s is still stored", v)
			}
		})
	}
}
