package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// noKeepAlive keeps the fake clock's only waiters the tools' step timers.
var noKeepAlive = server.Config{SSEKeepAlive: -1}

// startLongOperation starts long_operation on a POST stream and returns the
// stream after its priming event.
func (e *env) startLongOperation(c *wire.Client, sid string, steps int) *wire.Stream {
	e.t.Helper()
	st, err := c.OpenPOST(e.ctx(), sid, c.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": 1000}, "tok")))
	if err != nil {
		e.t.Fatal(err)
	}
	if prime, err := st.Next(); err != nil || !prime.HasID || prime.Data != "" {
		e.t.Fatalf("priming event: %+v %v", prime, err)
	}
	return st
}

// refresh is a page refresh: every TCP connection of the client is cut with
// no MCP-level goodbye; once the server has noticed, a new client instance
// takes over.
func (e *env) refresh() *wire.Client {
	e.t.Helper()
	e.conns.CutAll()
	eventually(e.t, "the server to notice the cut", func() bool { return !e.busy() })
	return e.client()
}

// openGET opens the standalone GET stream (resuming after last if
// non-empty), closed at cleanup, past its priming event.
func (e *env) openGET(c *wire.Client, sid, last string) *wire.Stream {
	e.t.Helper()
	st, _ := e.openPrimed(c, sid, last)
	return st
}

// openPrimed is openGET that also returns the priming event.
func (e *env) openPrimed(c *wire.Client, sid, last string) (*wire.Stream, sse.Event) {
	e.t.Helper()
	st := e.openStream(c, sid, last)
	prime, err := st.Next()
	if err != nil || !prime.HasID || prime.ID == "" || prime.Data != "" {
		e.t.Fatalf("GET (Last-Event-ID %q): first event %+v (%v), want a priming event", last, prime, err)
	}
	return st, prime
}

// openStream opens a GET stream (resuming after last if non-empty), closed
// at cleanup, and reads nothing (a resume of a running call starts with a
// priming event, one of an answered call does not).
func (e *env) openStream(c *wire.Client, sid, last string) *wire.Stream {
	e.t.Helper()
	st, err := c.OpenGET(e.ctx(), sid, last)
	if err != nil {
		e.t.Fatalf("GET (Last-Event-ID %q): %v", last, err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

// step advances the fake clock by one long_operation step, once its timer waits.
func (e *env) step() {
	e.t.Helper()
	eventually(e.t, "a step timer", e.clock.HasWaiters)
	e.clock.Step(time.Second)
}

// next reads n events from st.
func next(t *testing.T, st *wire.Stream, n int) []sse.Event {
	t.Helper()
	var out []sse.Event
	for len(out) < n {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// describe renders events as "method progress/data" or "result TEXT".
func describe(t *testing.T, evs []sse.Event) string {
	t.Helper()
	var parts []string
	for _, ev := range evs {
		var m wire.Message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			t.Fatalf("event %q: %v", ev.Data, err)
		}
		if m.IsResponse() {
			text, _ := wire.ResultText(m.Result)
			parts = append(parts, "result "+text)
			continue
		}
		var p struct {
			Progress float64
			Data     string
		}
		json.Unmarshal(m.Params, &p)
		if m.Method == "notifications/progress" {
			parts = append(parts, "progress "+strings.TrimSpace(strings.Repeat("I", int(p.Progress))))
		} else {
			parts = append(parts, "log "+p.Data)
		}
	}
	return strings.Join(parts, ", ")
}

// TestOrphanedNotificationsRedirected covers REDIRECT-ORPHANED,
// REDIRECT-NO-RESPONSE, DISCONNECT-NOT-CANCEL and EVT-REPLAY-POST with a real
// TCP cut: the tool keeps running; its later notifications wait for the
// client's next GET, in order, once; its response stays on the POST stream.
func TestOrphanedNotificationsRedirected(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 3)
	e.step()
	seen := next(t, post, 2)
	if got := describe(t, seen); got != "progress I, log step 1 of 3" {
		t.Fatalf("before the cut: %s", got)
	}
	c := e.refresh()
	e.step()
	e.step()
	get := e.openGET(c, sid, "")
	if got := describe(t, next(t, get, 4)); got != "progress II, log step 2 of 3, progress III, log step 3 of 3" {
		t.Fatalf("standalone stream after the refresh: %s", got)
	}
	// The response never came on the standalone stream; resuming the POST
	// stream yields it, and only it, then the stream ends. A resume that
	// comes before the call has written its response (the notifications
	// above are read before it is) finds the call running and starts with a
	// priming event.
	resumed := e.openStream(c, sid, seen[1].ID)
	first := next(t, resumed, 1)
	if first[0].Data == "" && first[0].HasID {
		first = next(t, resumed, 1)
	}
	if got := describe(t, first); got != "result completed 3 steps" {
		t.Fatalf("resumed POST stream: %s", got)
	}
	if _, err := resumed.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("resumed POST stream did not end: %v", err)
	}
}

// TestOrphanedNotificationsLive: with a GET connected again, the orphaned
// call's notifications arrive on it live.
func TestOrphanedNotificationsLive(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 2)
	c := e.refresh()
	get := e.openGET(c, sid, "")
	e.step()
	if got := describe(t, next(t, get, 2)); got != "progress I, log step 1 of 2" {
		t.Fatalf("live on the standalone stream: %s", got)
	}
	e.step()
	if got := describe(t, next(t, get, 2)); got != "progress II, log step 2 of 2" {
		t.Fatalf("live on the standalone stream: %s", got)
	}
}

// TestFreshGETNoHistory: a GET without Last-Event-ID gets only what no
// client was sent; ids, priming events' included, stay unique across GETs
// and a re-initialize (EVT-ID-UNIQUE).
func TestFreshGETNoHistory(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 2)
	c := e.refresh()
	e.step()
	get, prime := e.openPrimed(c, sid, "")
	first := append([]sse.Event{prime}, next(t, get, 2)...)
	get.Close()
	eventually(t, "the GET to end", func() bool { return !e.busy() })
	// Re-initialize (new transport), then a fresh GET: no replay of step 1.
	if resp, err := c.Initialize(e.ctx(), sid); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("re-initialize: %v %v", resp, err)
	}
	get2, prime2 := e.openPrimed(c, sid, "")
	e.step()
	second := next(t, get2, 2)
	if got := describe(t, second); got != "progress II, log step 2 of 2" {
		t.Fatalf("second GET: %s", got)
	}
	second = append(second, prime2)
	ids := map[string]bool{}
	for _, ev := range append(first, second...) {
		if !ev.HasID || ids[ev.ID] {
			t.Fatalf("event id %q missing or repeated among %v", ev.ID, append(first, second...))
		}
		ids[ev.ID] = true
	}
}

// TestReplayErrors covers REPLAY-SESSION-SCOPED and the documented answers
// for ids that cannot be replayed: 400 with a reason, never 404 or 5xx.
func TestReplayErrors(t *testing.T) {
	e := newEnv(t, server.Config{SSEKeepAlive: -1, EventMaxAge: time.Minute})
	a := e.connect(e.c)
	b := e.connect(e.c)
	resp, err := e.c.Call(e.ctx(), a, "tools/call", wire.ToolParams("echo", map[string]any{"text": "secret"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	idOfA := resp.Events[0].ID
	cases := []struct {
		sid, last, reason string
	}{
		{b, idOfA, "unknown_event_id"},        // another session's stream
		{a, "nonsense", "malformed_event_id"}, // not <stream>_<index>
		{a, "x_y", "malformed_event_id"},
		{a, "NOSTREAM_3", "unknown_event_id"},
		{a, strings.Split(idOfA, "_")[0] + "_99", "unknown_event_id"}, // beyond the last event
	}
	for _, tc := range cases {
		got := e.getAfter(e.c, tc.sid, tc.last)
		if got.Status != http.StatusBadRequest || !strings.Contains(string(got.Body), `"reason":"`+tc.reason+`"`) {
			t.Errorf("Last-Event-ID %q on %s: HTTP %d %s, want 400 %s", tc.last, tc.sid, got.Status, got.Body, tc.reason)
		}
		if strings.Contains(string(got.Body), "secret") || len(got.Events) > 0 {
			t.Errorf("Last-Event-ID %q on %s replayed something: %s", tc.last, tc.sid, got.Body)
		}
	}
	// Evicted by age: the answer says so.
	e.clock.Step(2 * time.Minute)
	e.srv.SweepEvents()
	got := e.getAfter(e.c, a, strings.Split(idOfA, "_")[0]+"_0")
	if got.Status != http.StatusBadRequest || !strings.Contains(string(got.Body), `"reason":"events_evicted"`) {
		t.Fatalf("evicted id: HTTP %d %s", got.Status, got.Body)
	}
}

// TestKeepAliveAndRetry: quiet GET streams get comment lines every
// SSEKeepAlive; a replaced stream gets a retry field before it is closed.
func TestKeepAliveAndRetry(t *testing.T) {
	e := newEnv(t, server.Config{SSEKeepAlive: 15 * time.Second, SSERetry: 750 * time.Millisecond})
	sid := e.connect(e.c)
	// The GET adds one waiter to the clock: its keep-alive ticker.
	waiters := e.clock.Waiters()
	get := e.openGET(e.c, sid, "")
	eventually(t, "the keep-alive ticker", func() bool { return e.clock.Waiters() > waiters })
	e.clock.Step(15 * time.Second)
	// Read the raw stream: comments are what this test is about.
	body := bufio.NewReader(get.Resp.Body)
	line := func() string {
		l, err := body.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the GET stream: %v", err)
		}
		return strings.TrimRight(l, "\r\n")
	}
	for l := line(); l != ": keep-alive"; l = line() {
	}
	replaced := make(chan struct{})
	go func() {
		defer close(replaced)
		if st, err := e.client().OpenGET(e.ctx(), sid, ""); err == nil {
			st.Close()
		}
	}()
	for l := line(); l != "retry: 750"; l = line() {
		if strings.HasPrefix(l, "data:") && strings.TrimSpace(strings.TrimPrefix(l, "data:")) != "" {
			t.Fatalf("a message before the retry field: %q", l)
		}
	}
	if rest, err := io.ReadAll(body); err != nil || strings.TrimSpace(string(rest)) != "" {
		t.Fatalf("after the retry field: %q %v, want the end of the stream", rest, err)
	}
	<-replaced
}

// TestReplayGap covers REPLAY-GAP and EVT-REPLAY-STREAM on the standalone
// stream: messages sent while the client had no stream are replayed after
// its Last-Event-ID, in order, once, and nothing of other streams.
func TestReplayGap(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 3)
	c := e.refresh()
	get := e.openGET(c, sid, "")
	e.step()
	seen := next(t, get, 2) // step 1, live
	get.Close()
	eventually(t, "the GET to end", func() bool { return !e.busy() })
	e.step() // step 2 while the client has no stream
	e.step()
	// An unrelated call on its own POST stream meanwhile.
	e.tool(c, sid, "echo", map[string]any{"text": "other stream"})
	resumed := e.openGET(c, sid, seen[1].ID)
	if got := describe(t, next(t, resumed, 4)); got != "progress II, log step 2 of 3, progress III, log step 3 of 3" {
		t.Fatalf("replayed gap: %s", got)
	}
}
