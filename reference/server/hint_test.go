package server_test

import (
	"crypto/rand"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestRecoveryHint covers RESTART-HINT: a stale id gets 404 plus a new,
// already initialized session id; an immediate retry with it succeeds.
func TestRecoveryHint(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run(method, func(t *testing.T) {
			e := newEnv(t, server.Config{RecoveryHint: true})
			stale := rand.Text() // the form of the ids the server issues
			call := e.c.Request("tools/call", wire.ToolParams("echo", map[string]any{"text": "again"}, ""))
			resp := e.send(e.c, method, stale, call)
			if resp.Status != http.StatusNotFound || string(resp.Body) != envelopeBody {
				t.Fatalf("stale id: HTTP %d %s, want 404 envelope", resp.Status, resp.Body)
			}
			fresh := resp.SessionID()
			if fresh == "" || fresh == stale {
				t.Fatalf("404 carries Mcp-Session-Id %q, want a new id", fresh)
			}
			// Retry at once, without initialize.
			if got := e.tool(e.c, fresh, "echo", map[string]any{"text": "again"}); got != "again" {
				t.Fatalf("retry with the hinted id: %q", got)
			}
			e.alive(1)
		})
	}
}

// TestRecoveryHintConcurrent: a burst of requests with one stale id makes one
// session, and every answer names it.
func TestRecoveryHintConcurrent(t *testing.T) {
	e := newEnv(t, server.Config{RecoveryHint: true})
	stale := rand.Text()
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := e.client()
			resp, err := c.Call(e.ctx(), stale, "tools/list", nil)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = resp.SessionID()
			// Distinct JSON-RPC ids: the clients now share one session.
			call := map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": wire.ToolParams("echo", map[string]any{"text": "x"}, "")}
			if r, err := c.Post(e.ctx(), ids[i], call); err != nil || r.Status != http.StatusOK {
				t.Errorf("retry %d: %v %v", i, r, err)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id == "" {
			t.Fatalf("hinted ids differ: %v", ids)
		}
	}
	e.alive(1)
	// A different stale id gets its own session.
	resp := e.do(e.c, http.MethodPost, rand.Text(), e.c.Request("tools/list", nil))
	if resp.SessionID() == ids[0] || resp.SessionID() == "" {
		t.Fatalf("second stale id got %q", resp.SessionID())
	}
	e.alive(2)
}

// TestRecoveryHintExpired: once the hinted session is gone, the same stale id
// gets a new one; DELETE never creates a session; without the flag no hint.
func TestRecoveryHintLifecycle(t *testing.T) {
	e := newEnv(t, server.Config{RecoveryHint: true})
	stale := rand.Text()
	first := e.do(e.c, http.MethodPost, stale, e.c.Request("tools/list", nil)).SessionID()
	e.clock.Step(testIdle + 1)
	e.srv.Reap()
	e.clock.Step(testGrace)
	e.alive(0)
	second := e.do(e.c, http.MethodPost, stale, e.c.Request("tools/list", nil)).SessionID()
	if second == "" || second == first {
		t.Fatalf("after expiry the stale id got %q (first %q)", second, first)
	}
	if resp := e.do(e.c, http.MethodDelete, rand.Text(), nil); resp.Status != http.StatusNotFound || resp.SessionID() != "" {
		t.Fatalf("DELETE of a stale id: HTTP %d with id %q, want 404 without id", resp.Status, resp.SessionID())
	}
	e.alive(1)

	plain := newEnv(t, server.Config{})
	if resp := plain.do(plain.c, http.MethodPost, stale, plain.c.Request("tools/list", nil)); resp.SessionID() != "" {
		t.Fatalf("without --recovery-hint the 404 carries id %q", resp.SessionID())
	}
}

// TestRecoveryHintOnlyForOurIds: an id the server cannot have issued (not
// 26 base32 characters) gets the 404 without a new session, so made-up ids
// cannot mint sessions.
func TestRecoveryHintOnlyForOurIds(t *testing.T) {
	e := newEnv(t, server.Config{RecoveryHint: true})
	for _, id := range []string{"STALE", "stale-but-twenty-six-chars", "ABCDEFGHIJKLMNOPQRSTUVWXY1", rand.Text() + "A"} {
		if resp := e.do(e.c, http.MethodPost, id, e.c.Request("tools/list", nil)); resp.Status != http.StatusNotFound || resp.SessionID() != "" {
			t.Errorf("id %q: HTTP %d with id %q, want 404 without id", id, resp.Status, resp.SessionID())
		}
	}
	e.alive(0)
}

// TestRecoveryHintCountsAgainstLimits: a recovery session is a new session
// like an initialize: it takes a token of an anonymous address's bucket and
// a slot of a principal's cap, so stale ids cannot mint sessions past the
// per-client limits. Past them a stale id gets the plain 404, and an
// initialize gets 429.
func TestRecoveryHintCountsAgainstLimits(t *testing.T) {
	check := func(t *testing.T, e *env, c *wire.Client) {
		t.Helper()
		for range 2 {
			if resp := e.do(c, http.MethodPost, rand.Text(), c.Request("tools/list", nil)); resp.Status != http.StatusNotFound || resp.SessionID() == "" {
				t.Fatalf("stale id within the limit: HTTP %d with id %q, want 404 naming a new session", resp.Status, resp.SessionID())
			}
		}
		if resp := e.do(c, http.MethodPost, rand.Text(), c.Request("tools/list", nil)); resp.Status != http.StatusNotFound || resp.SessionID() != "" {
			t.Fatalf("stale id past the limit: HTTP %d with id %q, want 404 without id", resp.Status, resp.SessionID())
		}
		if resp, err := c.Initialize(e.ctx(), ""); err != nil || resp.Status != http.StatusTooManyRequests {
			t.Fatalf("initialize past the limit: %v %v, want 429", resp, err)
		}
		e.alive(2)
	}
	t.Run("anonymous", func(t *testing.T) {
		e := newEnv(t, server.Config{RecoveryHint: true, AnonymousSessionRate: 1, AnonymousSessionBurst: 2})
		check(t, e, e.c)
		e.clock.Step(time.Second) // a token back
		if resp := e.do(e.c, http.MethodPost, rand.Text(), e.c.Request("tools/list", nil)); resp.SessionID() == "" {
			t.Fatalf("stale id after the bucket refilled: HTTP %d without id", resp.Status)
		}
	})
	t.Run("principal", func(t *testing.T) {
		e, alice, mallory := twoPrincipalsWith(t, server.Config{RecoveryHint: true, MaxSessionsPerPrincipal: 2})
		check(t, e, alice)
		e.connect(mallory) // her cap is her own
	})
}
