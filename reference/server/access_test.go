package server_test

import (
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestSessionBoundToPrincipal covers AUTH-REFRESH-REJOIN: a session is the
// principal's, not its token's, so another token of the same principal (a
// refreshed one) carries on with it, state and all, and another principal
// is still refused.
func TestSessionBoundToPrincipal(t *testing.T) {
	e := newEnv(t, server.Config{BearerTokens: map[string]string{"tok-a": "alice", "tok-a2": "alice", "tok-m": "mallory"}})
	as := func(token string) *wire.Client {
		c := e.client()
		c.Header.Set("Authorization", "Bearer "+token)
		return c
	}
	alice, refreshed, mallory := as("tok-a"), as("tok-a2"), as("tok-m")
	sid := e.connect(alice)
	first := e.tool(alice, sid, "counter_increment", nil)
	if got := e.tool(refreshed, sid, "counter_increment", nil); got == first {
		t.Fatalf("counter_increment with alice's other token = %q again: not the same session's state", got)
	}
	if resp := e.do(mallory, http.MethodPost, sid, mallory.Request("tools/list", nil)); resp.Status != http.StatusForbidden && resp.Status != http.StatusNotFound {
		t.Fatalf("tools/list by another principal after alice's other token was used: HTTP %d, want 403 or 404", resp.Status)
	}
	if resp := e.do(alice, http.MethodPost, sid, alice.Request("tools/list", nil)); resp.Status != http.StatusOK {
		t.Fatalf("tools/list with alice's first token after her other one: HTTP %d, want 200", resp.Status)
	}
}

// TestLastEventIDOnPOSTIgnored: a Last-Event-ID header on a POST, which no
// revision forbids and some clients send on every request, is ignored:
// initialize and a request on the session are served as without it.
func TestLastEventIDOnPOSTIgnored(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.client()
	c.Header.Set("Last-Event-ID", "stream_1")
	sid := e.connect(c)
	if resp := e.do(c, http.MethodPost, sid, c.Request("tools/list", nil)); resp.Status != http.StatusOK {
		t.Fatalf("tools/list with a Last-Event-ID header: HTTP %d %s, want 200", resp.Status, resp.Body)
	}
}
