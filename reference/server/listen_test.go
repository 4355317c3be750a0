package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// modernClient is a 2026-07-28 client of e's server.
func (e *env) modernClient() *wire.Client {
	c := e.client()
	c.ProtocolVersion = modern
	return c
}

// listen opens a subscriptions/listen stream with request id id for the
// tallies named, and returns it with its acknowledgement.
func (e *env) listen(ctx context.Context, c *wire.Client, id string, tallies ...string) (*wire.Stream, wire.Message) {
	e.t.Helper()
	var uris []string
	for _, n := range tallies {
		uris = append(uris, "tally://"+n)
	}
	filter := map[string]any{"resourceSubscriptions": uris, "toolsListChanged": true}
	req, err := c.NewModernRequestID(ctx, id, "subscriptions/listen", map[string]any{"notifications": filter}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := c.Open(req)
	if err != nil {
		e.t.Fatalf("subscriptions/listen: %v", err)
	}
	if got := s.Resp.Header.Get("X-Accel-Buffering"); got != "no" {
		e.t.Errorf("listen stream: X-Accel-Buffering %q, want no", got)
	}
	return s, nextMessage(e.t, s)
}

// nextMessage reads s's next JSON-RPC message.
func nextMessage(t *testing.T, s *wire.Stream) wire.Message {
	t.Helper()
	ev, err := s.Next()
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	var m wire.Message
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		t.Fatalf("event %q: %v", ev.Data, err)
	}
	return m
}

// subscriptionID is a message's _meta subscription id, as JSON.
func subscriptionID(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return string(p.Meta["io.modelcontextprotocol/subscriptionId"])
}

// tally runs tally_steps for steps steps of interval_ms 0.
func (e *env) tally(c *wire.Client, name string, steps int) {
	e.t.Helper()
	resp, err := c.CallModern(e.ctx(), "tools/call", map[string]any{"name": "tally_steps", "arguments": map[string]any{"tally": name, "steps": steps, "interval_ms": 0}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if m, err := resp.Result(); err != nil || m.Error != nil {
		e.t.Fatalf("tally_steps: HTTP %d %v %v", resp.Status, err, m.Error)
	}
}

// TestModernListen: subscriptions/listen acknowledges first, with its id
// and the part of the filter honoured; each tally_steps step is a
// resources/updated on the streams that named the tally, tagged with
// their own listen's id; a stream cut leaves nothing behind, and a new
// listen gets what follows; quiet streams get keep-alive comments.
func TestModernListen(t *testing.T) {
	e := newEnv(t, server.Config{SSEKeepAlive: time.Second})
	c := e.modernClient()
	ctx := e.ctx()
	a, ack := e.listen(ctx, c, "listen-a", "k1")
	if ack.Method != "notifications/subscriptions/acknowledged" || subscriptionID(t, ack.Params) != `"listen-a"` {
		t.Fatalf("first message: %s %s", ack.Method, ack.Params)
	}
	if !strings.Contains(string(ack.Params), `"resourceSubscriptions":["tally://k1"]`) || strings.Contains(string(ack.Params), "toolsListChanged") {
		t.Errorf("acknowledged filter %s: want the tally subscription, not toolsListChanged (the tool list never changes)", ack.Params)
	}
	other := e.rawListen(ctx, c, "listen-b", "k2")
	e.tally(c, "k1", 2)
	for range 2 {
		m := nextMessage(t, a)
		if m.Method != "notifications/resources/updated" || subscriptionID(t, m.Params) != `"listen-a"` || !strings.Contains(string(m.Params), `"uri":"tally://k1"`) {
			t.Fatalf("listen-a got %s %s", m.Method, m.Params)
		}
	}
	e.tally(c, "k2", 1) // in order after anything of k1 that listen-b would have got
	if line := <-other; !strings.Contains(line, `"uri":"tally://k2"`) {
		t.Fatalf("listen-b, which named tally k2 only, got %s", line)
	}
	e.clock.Step(time.Second)
	if line := <-other; !strings.HasPrefix(line, ":") {
		t.Fatalf("a quiet listen stream after the keep-alive interval: %q, want a comment", line)
	}

	a.Close() // the cut: the subscription ends with it
	again, _ := e.listen(ctx, c, "listen-c", "k1")
	e.tally(c, "k1", 1)
	if m := nextMessage(t, again); subscriptionID(t, m.Params) != `"listen-c"` {
		t.Fatalf("after the cut, the new listen got %s %s", m.Method, m.Params)
	}
}

// rawListen opens a listen stream like listen and returns its lines after
// the acknowledgement (data lines and comments, not blank ones).
func (e *env) rawListen(ctx context.Context, c *wire.Client, id string, tallies ...string) <-chan string {
	e.t.Helper()
	var uris []string
	for _, n := range tallies {
		uris = append(uris, "tally://"+n)
	}
	req, err := c.NewModernRequestID(ctx, id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string, 16)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "acknowledged") {
	}
	go func() {
		defer close(lines)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, ":") || strings.HasPrefix(l, "data:") {
				lines <- l
			}
		}
	}()
	return lines
}

// TestModernListenGracefulEnd: at shutdown a listen stream gets the
// listen's completion response, tagged with its id, then ends.
func TestModernListenGracefulEnd(t *testing.T) {
	e := newEnv(t, server.Config{})
	s, _ := e.listen(e.ctx(), e.modernClient(), "7", "k1")
	go e.srv.Close()
	m := nextMessage(t, s)
	if string(m.ID) != `"7"` || m.Error != nil || subscriptionID(t, m.Result) != `"7"` || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Fatalf("at shutdown: %s %s %v", m.ID, m.Result, m.Error)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the completion response: %v, want the end of the stream", err)
	}
}

// TestModernCloseCancels: closing a call's response stream cancels the
// call: its tally stops advancing.
func TestModernCloseCancels(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.modernClient()
	ctx, cancel := context.WithCancel(e.ctx())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.CallModern(ctx, "tools/call", map[string]any{"name": "tally_steps", "arguments": map[string]any{"tally": "cut", "steps": 100, "interval_ms": 1000}}, nil)
	}()
	count := func() int64 {
		resp, err := c.CallModern(e.ctx(), "tools/call", map[string]any{"name": "tally_get", "arguments": map[string]any{"tally": "cut"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := resp.Result()
		var r struct {
			Structured struct{ Count int64 } `json:"structuredContent"`
		}
		if err != nil || m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
			t.Fatalf("tally_get: %v %v %s", err, m.Error, m.Result)
		}
		return r.Structured.Count
	}
	for range 2 {
		e.awaitTimer()
		e.clock.Step(time.Second)
	}
	eventually(t, "two steps counted", func() bool { return count() == 2 })
	cancel()
	<-done
	eventually(t, "the cancelled call's timer to go", func() bool { return !e.clock.HasWaiters() })
	e.clock.Step(10 * time.Second)
	if n := count(); n != 2 {
		t.Fatalf("after its stream was closed the call counted on to %d", n)
	}
}

// TestModernUnsupportedVersion: a sessionless request naming a version
// the server does not speak gets 400, UnsupportedProtocolVersionError with
// the versions it does and the one asked for, and the request's id; a
// session request keeps the sessions' answer.
func TestModernUnsupportedVersion(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.modernClient()
	c.ProtocolVersion = "2099-01-01"
	req, err := c.NewModernRequestID(e.ctx(), json.Number("12345678901234567890"), "tools/list", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := resp.Result()
	if err != nil || resp.Status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32022 || string(m.ID) != "12345678901234567890" {
		t.Fatalf("HTTP %d %v id %s error %v", resp.Status, err, m.ID, m.Error)
	}
	var data struct {
		Supported []string
		Requested string
	}
	if json.Unmarshal(m.Error.Data, &data) != nil || data.Requested != "2099-01-01" || len(data.Supported) == 0 || data.Supported[0] != modern {
		t.Fatalf("data %s", m.Error.Data)
	}

	c.ProtocolVersion = "2026-01-01" // before the revision, but its _meta says which era it is
	resp, err = c.CallModern(e.ctx(), "tools/list", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := resp.Result(); resp.Status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32022 {
		t.Fatalf("2026-01-01 with the revision's _meta: HTTP %d %v", resp.Status, m.Error)
	}

	sid := e.connect(e.c)
	legacy, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, e.c.Request("tools/list", nil))
	if err != nil {
		t.Fatal(err)
	}
	legacy.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	resp, err = e.c.Do(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := resp.Result(); resp.Status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("session request with an unsupported version: HTTP %d %v", resp.Status, m.Error)
	}
}

// TestModernSSEUnbuffered: a call's SSE answer carries X-Accel-Buffering: no.
func TestModernSSEUnbuffered(t *testing.T) {
	e := newEnv(t, server.Config{})
	resp, err := e.modernClient().CallModern(e.ctx(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.IsSSE || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("SSE %v, X-Accel-Buffering %q", resp.IsSSE, resp.Header.Get("X-Accel-Buffering"))
	}
}
