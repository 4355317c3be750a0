package serverchecks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// waitFor bounds every wait in these tests.
const waitFor = 10 * time.Second

// fixtureServer is one fixture served on a loopback port.
type fixtureServer struct {
	t     *testing.T
	srv   *server.Server
	url   string
	clock *clocktesting.FakeClock // nil on the real clock
	c     *wire.Client            // the first principal, alice
}

// serve starts fixture name with the fixtures' configuration, changed by
// opts. The server's Run loop is not started: tests reap and sweep
// themselves, so nothing happens behind their back.
func serve(t *testing.T, name string, opts ...func(*server.Config)) *fixtureServer {
	t.Helper()
	f, err := servers.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := servers.Config()
	for _, o := range opts {
		o(&cfg)
	}
	srv, h, err := f.Server(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tg := &fixtureServer{t: t, srv: srv}
	hs := httptest.NewUnstartedServer(h)
	hs.Listener = f.Listener(hs.Listener)
	hs.Start()
	t.Cleanup(func() {
		srv.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	tg.url = hs.URL
	if fc, ok := cfg.Clock.(*clocktesting.FakeClock); ok {
		tg.clock = fc
	}
	tg.c = tg.client("alice-token")
	return tg
}

// fakeClock runs the server (and the fixture's timers) on a fake clock.
func fakeClock(c *server.Config) {
	c.Clock = clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// client returns a client with its own connections, sending token.
func (tg *fixtureServer) client(token string) *wire.Client {
	c := wire.New(tg.url)
	tr := &http.Transport{}
	c.HTTP = &http.Client{Transport: tr}
	c.Header.Set("Authorization", "Bearer "+token)
	tg.t.Cleanup(tr.CloseIdleConnections)
	return c
}

func (tg *fixtureServer) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	tg.t.Cleanup(cancel)
	return ctx
}

func (tg *fixtureServer) connect(c *wire.Client) string {
	tg.t.Helper()
	sid, err := c.Connect(tg.ctx())
	if err != nil {
		tg.t.Fatalf("connect: %v", err)
	}
	return sid
}

// send sends a request and reads the whole answer.
func (tg *fixtureServer) send(c *wire.Client, method, sid string, body any) *wire.Response {
	tg.t.Helper()
	req, err := c.NewHTTPRequest(tg.ctx(), method, sid, body)
	if err != nil {
		tg.t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		tg.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// status sends tools/list on sid and returns the HTTP status.
func (tg *fixtureServer) status(c *wire.Client, sid string) int {
	tg.t.Helper()
	return tg.send(c, http.MethodPost, sid, c.Request("tools/list", nil)).Status
}

// open opens a GET stream (resuming after last if set). Like a client, it
// retries a 409: right after a cut the server may still hold the stream.
func (tg *fixtureServer) open(c *wire.Client, sid, last string) *stream {
	tg.t.Helper()
	s, err := c.OpenGET(tg.ctx(), sid, last)
	for deadline := time.Now().Add(waitFor); isConflict(err) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		s, err = c.OpenGET(tg.ctx(), sid, last)
	}
	if err != nil {
		tg.t.Fatalf("GET (Last-Event-ID %q): %v", last, err)
	}
	return tg.read(s)
}

func isConflict(err error) bool {
	se := new(wire.StatusError)
	return errors.As(err, &se) && se.Status == http.StatusConflict
}

// call starts long_operation with a progress token and returns its POST stream.
func (tg *fixtureServer) call(c *wire.Client, sid, token string, steps, intervalMS int) *stream {
	tg.t.Helper()
	body := c.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": intervalMS}, token))
	s, err := c.OpenPOST(tg.ctx(), sid, body)
	if err != nil {
		tg.t.Fatalf("tools/call: %v", err)
	}
	return tg.read(s)
}

// waitUntil polls cond until it holds, failing the test after waitFor.
func (tg *fixtureServer) waitUntil(what string, cond func() bool) {
	tg.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			tg.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stream is a test's reader of an SSE stream (see sseReader), closed
// when the test ends.
type stream struct {
	*sseReader
	t *testing.T
}

func (tg *fixtureServer) read(s *wire.Stream) *stream {
	st := &stream{sseReader: readSSE(s), t: tg.t}
	tg.t.Cleanup(st.Close)
	return st
}

// endedCleanly reports whether the server ended the stream (EOF).
func (st *stream) endedCleanly() bool {
	if !st.Ended() {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return errors.Is(st.err, io.EOF)
}

// await waits until n events satisfy match and returns every event so far.
func (st *stream) await(what string, n int, match func(sse.Event) bool) []sse.Event {
	st.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		evs := st.Events()
		k := 0
		for _, ev := range evs {
			if match(ev) {
				k++
			}
		}
		if k >= n {
			return evs
		}
		if time.Now().After(deadline) || st.Ended() && len(st.Events()) == len(evs) {
			st.t.Fatalf("waiting for %d × %s: got %d in %d events", n, what, k, len(evs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// idOf is the id of the first of evs that match: a resume point fixed by
// what was awaited, whatever arrived after it.
func idOf(evs []sse.Event, match func(sse.Event) bool) string {
	for _, ev := range evs {
		if match(ev) {
			return ev.ID
		}
	}
	return ""
}

func msg(ev sse.Event) (wire.Message, bool) {
	var m wire.Message
	if strings.TrimSpace(ev.Data) == "" || json.Unmarshal([]byte(ev.Data), &m) != nil {
		return m, false
	}
	return m, true
}

// progress matches the progress notifications of token.
func progress(token string) func(sse.Event) bool {
	return func(ev sse.Event) bool {
		m, ok := msg(ev)
		if !ok {
			return false
		}
		tok, ok := servers.ProgressToken(m)
		return ok && tok == `"`+token+`"`
	}
}

// response matches any JSON-RPC response.
func response(ev sse.Event) bool {
	m, ok := msg(ev)
	return ok && m.IsResponse()
}

// count counts the events that match.
func count(evs []sse.Event, match func(sse.Event) bool) int {
	n := 0
	for _, ev := range evs {
		if match(ev) {
			n++
		}
	}
	return n
}
