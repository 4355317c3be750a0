package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Short timings for tests; the fake clock makes them exact.
const (
	testReaper = time.Second
	testIdle   = 2 * time.Second
	testGrace  = 10 * time.Second
)

// env is a reference server on a loopback port with a fake clock, and a
// client whose TCP connections the test can cut.
type env struct {
	t     *testing.T
	srv   *server.Server
	url   string
	clock *clocktesting.FakeClock
	conns *nettest.ConnTracker
	c     *wire.Client
	logs  *nettest.SyncBuffer
}

func newEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	return newEnvListener(t, cfg, nil)
}

// newEnvListener is newEnv with the server's listener wrapped by wrap, if set.
func newEnvListener(t *testing.T, cfg server.Config, wrap func(net.Listener) net.Listener) *env {
	t.Helper()
	cfg, fc, logs := testConfig(cfg)
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewUnstartedServer(srv)
	if wrap != nil {
		hs.Listener = wrap(hs.Listener)
	}
	hs.Start()
	t.Cleanup(func() {
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	e := &env{t: t, srv: srv, url: hs.URL, clock: fc, conns: &nettest.ConnTracker{}, logs: logs}
	e.c = e.client()
	return e
}

// testConfig fills cfg with the test timings, a fake clock (unless cfg has
// a clock) and a logger writing to the returned buffer.
func testConfig(cfg server.Config) (server.Config, *clocktesting.FakeClock, *nettest.SyncBuffer) {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if cfg.Clock == nil {
		cfg.Clock = fc
	}
	if cfg.ReaperInterval == 0 {
		cfg.ReaperInterval = testReaper
	}
	if cfg.IdleThreshold == 0 {
		cfg.IdleThreshold = testIdle
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = testGrace
	}
	logs := &nettest.SyncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	return cfg, fc, logs
}

// client returns a new wire client whose connections e.conns tracks.
func (e *env) client() *wire.Client {
	c := wire.New(e.url)
	c.HTTP = &http.Client{Transport: &http.Transport{DialContext: e.conns.Dial}}
	e.t.Cleanup(c.HTTP.CloseIdleConnections)
	return c
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// connect runs the handshake and returns the session id.
func (e *env) connect(c *wire.Client) string {
	e.t.Helper()
	sid, err := c.Connect(e.ctx())
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	return sid
}

// tool calls a tool and fails the test on any error.
func (e *env) tool(c *wire.Client, sid, name string, args any) string {
	e.t.Helper()
	out, err := c.ToolText(e.ctx(), sid, name, args)
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	return out
}

// do sends method with sid and returns the answer.
func (e *env) do(c *wire.Client, method, sid string, body any) *wire.Response {
	e.t.Helper()
	req, err := c.NewHTTPRequest(e.ctx(), method, sid, body)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// send sends method with sid; postBody is the body when method is POST and
// ignored otherwise, so one loop can try POST, GET and DELETE alike.
func (e *env) send(c *wire.Client, method, sid string, postBody any) *wire.Response {
	e.t.Helper()
	if method != http.MethodPost {
		postBody = nil
	}
	return e.do(c, method, sid, postBody)
}

// getAfter sends a GET with Last-Event-ID last and reads the whole answer
// (for answers that are not streams).
func (e *env) getAfter(c *wire.Client, sid, last string) *wire.Response {
	e.t.Helper()
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodGet, sid, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set(wire.HeaderLastEventID, last)
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// twoPrincipals returns a server requiring bearer tokens and clients of two
// principals, alice and mallory.
func twoPrincipals(t *testing.T) (e *env, alice, mallory *wire.Client) {
	return twoPrincipalsWith(t, server.Config{})
}

// twoPrincipalsWith is twoPrincipals on a server configured by cfg.
func twoPrincipalsWith(t *testing.T, cfg server.Config) (e *env, alice, mallory *wire.Client) {
	cfg.BearerTokens = map[string]string{"tok-a": "alice", "tok-m": "mallory"}
	e = newEnv(t, cfg)
	alice, mallory = e.client(), e.client()
	alice.Header.Set("Authorization", "Bearer tok-a")
	mallory.Header.Set("Authorization", "Bearer tok-m")
	return e, alice, mallory
}

// eventually polls cond until it holds or 10s pass; for conditions that
// another goroutine makes true (no fixed sleeps).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInitializeRefusalPassesThrough: an initialize the go-sdk refuses (an
// Accept without text/event-stream) gets the go-sdk's 400, saying why, not
// an envelope telling the client to reinitialize, which it would do for
// ever: the session that never was is removed after the answer.
func TestInitializeRefusalPassesThrough(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, "", e.c.Request("initialize", e.c.InitializeParams()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := e.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "Accept must contain") {
		t.Fatalf("initialize with Accept: application/json: HTTP %d %s, want the go-sdk's 400", resp.Status, resp.Body)
	}
	if resp.SessionID() != "" {
		t.Errorf("a refused initialize named session %q", resp.SessionID())
	}
}
