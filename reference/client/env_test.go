package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Server timings; the server's fake clock makes them exact.
const (
	testReaper = time.Second
	testIdle   = 2 * time.Second
	testGrace  = 10 * time.Second
)

// env is a reference server on a loopback port with a fake clock, and a
// recorder of every HTTP request clients send it.
type env struct {
	t     *testing.T
	srv   *server.Server
	url   string
	clock *clocktesting.FakeClock
	conns *nettest.ConnTracker
	reqs  *requestLog
}

func newEnv(t *testing.T, cfg server.Config) *env {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Clock = fc
	if cfg.ReaperInterval == 0 {
		cfg.ReaperInterval = testReaper
	}
	if cfg.IdleThreshold == 0 {
		cfg.IdleThreshold = testIdle
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = testGrace
	}
	if cfg.SSEKeepAlive == 0 {
		cfg.SSEKeepAlive = -1 // the fake clock's only waiters are then the tools'
	}
	logs := &nettest.SyncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, clock: fc, conns: &nettest.ConnTracker{}, reqs: &requestLog{}}
	hs := httptest.NewServer(e.reqs.wrap(srv))
	t.Cleanup(func() {
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	e.url = hs.URL
	return e
}

// options returns client options for e with short delays, a recorder and
// connections e.conns can cut.
func (e *env) options(st storage.Storage, rec *recorder) client.Options {
	hc := &http.Client{Transport: &http.Transport{DialContext: e.conns.Dial}}
	e.t.Cleanup(hc.CloseIdleConnections)
	o := client.Options{
		URL:               e.url,
		Storage:           st,
		HTTPClient:        hc,
		ReconnectDelay:    10 * time.Millisecond,
		MaxReconnectDelay: 50 * time.Millisecond,
		Settle:            20 * time.Millisecond,
	}
	o.Logger = testLogger()
	if rec != nil {
		o.OnStatus, o.OnNotification = rec.status, rec.notify
	}
	return o
}

// testLogger logs the client's debug lines to stderr when
// MCP_CONFORM_CLIENT_DEBUG is set.
func testLogger() *slog.Logger {
	if os.Getenv("MCP_CONFORM_CLIENT_DEBUG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newClient builds and connects a client, closed at cleanup.
func (e *env) newClient(o client.Options) *client.Client {
	e.t.Helper()
	c, err := client.New(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	if err := c.Connect(ctx(e.t)); err != nil {
		e.t.Fatalf("Connect: %v", err)
	}
	return c
}

// step advances the server clock by one long_operation step once a step
// timer waits.
func (e *env) step() {
	e.t.Helper()
	eventually(e.t, "a step timer", e.clock.HasWaiters)
	e.clock.Step(time.Second)
}

// expire makes every session idle past its grace period: the reaper's
// expiry, without waiting.
func (e *env) expire() {
	e.t.Helper()
	eventually(e.t, "no request in flight", func() bool { return e.srv.InFlight() == 0 })
	e.clock.Step(testIdle + time.Millisecond)
	e.srv.Reap()
	e.clock.Step(testGrace)
	eventually(e.t, "sessions to expire", func() bool { return e.srv.SessionCount() == 0 })
}

func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or 10s pass: for conditions another
// goroutine makes true.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// recorder keeps what a client reported, in order.
type recorder struct {
	mu       sync.Mutex
	statuses []client.StatusEvent
	notes    []client.Notification
}

func (r *recorder) status(ev client.StatusEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, ev)
}

func (r *recorder) notify(n client.Notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, n)
}

// trail renders the statuses as "connecting connected reconnecting
// connected(reconnected) ...".
func (r *recorder) trail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, ev := range r.statuses {
		s := string(ev.Status)
		if ev.Reconnected {
			s += "(reconnected)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// steps renders the notifications as "p1 l1 p2 l2 ..." (progress, log).
func (r *recorder) steps() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return describe(r.notes)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notes)
}

func (r *recorder) eventIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, n := range r.notes {
		ids = append(ids, n.EventID)
	}
	return ids
}

func describe(notes []client.Notification) string {
	var parts []string
	for _, n := range notes {
		var p struct {
			Progress float64 `json:"progress"`
			Data     string  `json:"data"`
		}
		json.Unmarshal(n.Params, &p)
		switch n.Method {
		case "notifications/progress":
			parts = append(parts, fmt.Sprintf("p%d", int(p.Progress)))
		case "notifications/message":
			var i, of int
			fmt.Sscanf(p.Data, "step %d of %d", &i, &of)
			parts = append(parts, fmt.Sprintf("l%d", i))
		default:
			parts = append(parts, n.Method)
		}
	}
	return strings.Join(parts, " ")
}

// requestLog records the requests a server got.
type requestLog struct {
	mu   sync.Mutex
	reqs []seenRequest
	// gate, if set, may answer a request itself (true) after it is logged.
	gate func(w http.ResponseWriter, r seenRequest) bool
}

type seenRequest struct {
	Method, Session, Version, LastEventID, RPC string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sr := seenRequest{Method: r.Method, Session: r.Header.Get("Mcp-Session-Id"), Version: r.Header.Get("Mcp-Protocol-Version"), LastEventID: r.Header.Get("Last-Event-ID")}
		if r.Method == http.MethodPost {
			body, rest := peekMethod(r)
			r.Body = rest
			sr.RPC = body
		}
		l.mu.Lock()
		l.reqs = append(l.reqs, sr)
		gate := l.gate
		l.mu.Unlock()
		if gate != nil && gate(w, sr) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) all() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.reqs...)
}

// count counts the recorded requests that match.
func (l *requestLog) count(match func(seenRequest) bool) int {
	n := 0
	for _, r := range l.all() {
		if match(r) {
			n++
		}
	}
	return n
}
