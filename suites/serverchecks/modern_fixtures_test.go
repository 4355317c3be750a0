package serverchecks

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// modern is a 2026-07-28 client of tg, as alice.
func (tg *fixtureServer) modern() *wire.Client {
	c := tg.client("alice-token")
	c.ProtocolVersion = wire.SessionlessProtocolVersion
	return c
}

// do sends req and returns the answer's status and message.
func (tg *fixtureServer) do(c *wire.Client, req *http.Request) (int, wire.Message, *wire.Response) {
	tg.t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		tg.t.Fatal(err)
	}
	m, _ := resp.Result()
	return resp.Status, m, resp
}

// request builds a sessionless request with id "r1".
func (tg *fixtureServer) request(c *wire.Client, method string, params map[string]any, caps map[string]any) *http.Request {
	tg.t.Helper()
	req, err := c.NewModernRequestID(tg.ctx(), "r1", method, params, caps)
	if err != nil {
		tg.t.Fatal(err)
	}
	return req
}

func errCode(m wire.Message) int {
	if m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// TestVersionRefusedAsInvalid: an unsupported version of the sessionless
// era gets -32600 with id null.
func TestVersionRefusedAsInvalid(t *testing.T) {
	t.Parallel()
	tg := serve(t, "version-refused-as-invalid")
	c := tg.modern()
	c.ProtocolVersion = "2099-01-01"
	status, m, _ := tg.do(c, tg.request(c, "tools/list", nil, nil))
	if status != http.StatusBadRequest || errCode(m) != -32600 || string(m.ID) != "null" {
		t.Fatalf("HTTP %d error %v id %s; want 400, -32600, id null", status, m.Error, m.ID)
	}
}

// TestHeaderMismatchServed: a request whose Mcp-Method disagrees with its
// body is served.
func TestHeaderMismatchServed(t *testing.T) {
	t.Parallel()
	tg := serve(t, "header-mismatch-served")
	c := tg.modern()
	req := tg.request(c, "tools/list", nil, nil)
	req.Header.Set(wire.HeaderMcpMethod, "tools/call")
	if status, m, _ := tg.do(c, req); status != http.StatusOK || m.Error != nil {
		t.Fatalf("HTTP %d error %v; want the tools/list answered", status, m.Error)
	}
}

// TestUnknownMethod400: an unknown method gets 400 -32600.
func TestUnknownMethod400(t *testing.T) {
	t.Parallel()
	tg := serve(t, "unknown-method-400")
	c := tg.modern()
	if status, m, _ := tg.do(c, tg.request(c, "no/such", nil, nil)); status != http.StatusBadRequest || errCode(m) != -32600 {
		t.Fatalf("HTTP %d error %v; want 400 -32600", status, m.Error)
	}
}

// TestLegacyGETDelete: GET and DELETE naming 2026-07-28 are answered as
// if the standalone stream and sessions existed.
func TestLegacyGETDelete(t *testing.T) {
	t.Parallel()
	tg := serve(t, "legacy-get-delete")
	c := tg.modern()
	for method, want := range map[string]int{http.MethodGet: http.StatusOK, http.MethodDelete: http.StatusNoContent} {
		req, _ := c.NewHTTPRequest(tg.ctx(), method, "", nil)
		req.Header.Set(wire.HeaderProtocolVersion, wire.SessionlessProtocolVersion)
		if status, _, _ := tg.do(c, req); status != want {
			t.Errorf("%s: HTTP %d, want %d", method, status, want)
		}
	}
}

// TestSessionIDMinted: answers of 2026-07-28 carry an Mcp-Session-Id.
func TestSessionIDMinted(t *testing.T) {
	t.Parallel()
	tg := serve(t, "session-id-minted")
	c := tg.modern()
	if _, _, resp := tg.do(c, tg.request(c, "server/discover", nil, nil)); resp.SessionID() == "" {
		t.Fatal("server/discover's answer has no Mcp-Session-Id")
	}
}

// TestLastEventIDReplays: a request with Last-Event-ID gets an earlier
// call's events before its own answer.
func TestLastEventIDReplays(t *testing.T) {
	t.Parallel()
	tg := serve(t, "last-event-id-replays")
	c := tg.modern()
	tg.do(c, tg.request(c, "tools/call", wire.ToolParams("echo", map[string]any{"text": "earlier"}, ""), nil))
	req := tg.request(c, "tools/list", nil, nil)
	req.Header.Set(wire.HeaderLastEventID, "0")
	_, _, resp := tg.do(c, req)
	msgs, err := resp.Messages()
	if err != nil || len(msgs) < 2 || !strings.Contains(string(msgs[0].Result), "earlier") {
		t.Fatalf("answer %v %+v; want the echo's result replayed first", err, msgs)
	}
}

// TestSSEBuffered: SSE answers lack X-Accel-Buffering.
func TestSSEBuffered(t *testing.T) {
	t.Parallel()
	tg := serve(t, "sse-buffered")
	c := tg.modern()
	_, _, resp := tg.do(c, tg.request(c, "tools/call", wire.ToolParams("echo", map[string]any{"text": "x"}, ""), nil))
	if !resp.IsSSE || resp.Header.Get("X-Accel-Buffering") != "" {
		t.Fatalf("SSE %v X-Accel-Buffering %q", resp.IsSSE, resp.Header.Get("X-Accel-Buffering"))
	}
}

// createTask starts a task of long_operation and returns its id.
func (tg *fixtureServer) createTask(c *wire.Client) string {
	tg.t.Helper()
	_, m, _ := tg.do(c, tg.request(c, "tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 1, "interval_ms": 100}, ""), wire.DeclaringTasks()))
	var tk struct{ TaskID string }
	if m.Error != nil || json.Unmarshal(m.Result, &tk) != nil || tk.TaskID == "" {
		tg.t.Fatalf("CreateTaskResult: %v %s", m.Error, m.Result)
	}
	return tk.TaskID
}

// TestTaskUndeclaredServed: tasks/get without the extension declared is served.
func TestTaskUndeclaredServed(t *testing.T) {
	t.Parallel()
	tg := serve(t, "task-undeclared-served")
	c := tg.modern()
	id := tg.createTask(c)
	if status, m, _ := tg.do(c, tg.request(c, "tasks/get", map[string]any{"taskId": id}, nil)); status != http.StatusOK || m.Error != nil {
		t.Fatalf("undeclared tasks/get: HTTP %d %v", status, m.Error)
	}
}

// TestTaskMcpNameUnchecked: tasks/get without Mcp-Name is served.
func TestTaskMcpNameUnchecked(t *testing.T) {
	t.Parallel()
	tg := serve(t, "task-mcp-name-unchecked")
	c := tg.modern()
	id := tg.createTask(c)
	req := tg.request(c, "tasks/get", map[string]any{"taskId": id}, wire.DeclaringTasks())
	req.Header.Del(wire.HeaderMcpName)
	if status, m, _ := tg.do(c, req); status != http.StatusOK || m.Error != nil {
		t.Fatalf("tasks/get without Mcp-Name: HTTP %d %v", status, m.Error)
	}
}

// tally calls tally_steps or tally_get and returns the result text.
func (tg *fixtureServer) tally(c *wire.Client, ctx context.Context, tool string, args map[string]any) string {
	tg.t.Helper()
	req, err := c.NewModernRequest(ctx, "tools/call", wire.ToolParams(tool, args, ""), nil)
	if err != nil {
		tg.t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	m, _ := resp.Result()
	text, _ := wire.ResultText(m.Result)
	return text
}

// TestCloseNotCancel: a call whose stream the client closed runs to its end.
func TestCloseNotCancel(t *testing.T) {
	t.Parallel()
	tg := serve(t, "close-not-cancel")
	c := tg.modern()
	ctx, cancel := context.WithTimeout(tg.ctx(), 100*time.Millisecond)
	defer cancel()
	tg.tally(c, ctx, "tally_steps", map[string]any{"tally": "t", "steps": 4, "interval_ms": 100})
	tg.waitUntil("the cut call to count all 4 steps", func() bool {
		return tg.tally(c, tg.ctx(), "tally_get", map[string]any{"tally": "t"}) == "4"
	})
}

// listenLines opens a listen stream for tally and returns its data lines.
func (tg *fixtureServer) listenLines(c *wire.Client, tally string) <-chan string {
	tg.t.Helper()
	req := tg.request(c, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"tally://" + tally}}}, nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		tg.t.Fatal(err)
	}
	tg.t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data:") || strings.HasPrefix(l, ":") {
				lines <- l
			}
		}
	}()
	return lines
}

// nextLine returns the next line, failing after waitFor.
func nextLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(waitFor):
		t.Fatal("no line in time")
	}
	return ""
}

// TestOrphansToListen: the progress of a call whose stream was closed
// arrives on the principal's listen stream.
func TestOrphansToListen(t *testing.T) {
	t.Parallel()
	tg := serve(t, "orphans-to-listen")
	c := tg.modern()
	lines := tg.listenLines(c, "x")
	nextLine(t, lines) // the acknowledgement
	s, err := c.OpenModern(tg.ctx(), "tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 3, "interval_ms": 100}, "tok"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for l := nextLine(t, lines); !strings.Contains(l, `"progressToken":"tok"`); l = nextLine(t, lines) {
	}
}

// TestListenNoKeepalive: a quiet listen stream carries no comments.
func TestListenNoKeepalive(t *testing.T) {
	t.Parallel()
	tg := serve(t, "listen-no-keepalive")
	c := tg.modern()
	lines := tg.listenLines(c, "q")
	nextLine(t, lines)
	tg.tally(c, tg.ctx(), "tally_steps", map[string]any{"tally": "q", "steps": 1, "interval_ms": 1200}) // over two keep-alive intervals
	if l := nextLine(t, lines); !strings.Contains(l, "resources/updated") {
		t.Fatalf("after a quiet second: %q, want the update and no comment before it", l)
	}
}

// TestListenAckUntagged: the acknowledgement has no _meta.
func TestListenAckUntagged(t *testing.T) {
	t.Parallel()
	tg := serve(t, "listen-ack-untagged")
	if l := nextLine(t, tg.listenLines(tg.modern(), "a")); !strings.Contains(l, "acknowledged") || strings.Contains(l, "subscriptionId") {
		t.Fatalf("first line %q", l)
	}
}

// TestListenUnfiltered: a stream that named another tally gets the update.
func TestListenUnfiltered(t *testing.T) {
	t.Parallel()
	tg := serve(t, "listen-unfiltered")
	c := tg.modern()
	lines := tg.listenLines(c, "other")
	nextLine(t, lines)
	tg.tally(c, tg.ctx(), "tally_steps", map[string]any{"tally": "mine", "steps": 1, "interval_ms": 0})
	if l := nextLine(t, lines); !strings.Contains(l, "tally://mine") {
		t.Fatalf("%q", l)
	}
}

// TestListenSharedTag: a second listen's notifications carry the first's id.
func TestListenSharedTag(t *testing.T) {
	t.Parallel()
	tg := serve(t, "listen-shared-tag")
	c := tg.modern()
	first := tg.listenLines(c, "s") // id r1
	nextLine(t, first)
	req, _ := c.NewModernRequestID(tg.ctx(), "second", "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"tally://s"}}}, nil)
	s, err := c.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil { // the acknowledgement
		t.Fatal(err)
	}
	tg.tally(c, tg.ctx(), "tally_steps", map[string]any{"tally": "s", "steps": 1, "interval_ms": 0})
	ev, err := s.Next()
	if err != nil || !strings.Contains(ev.Data, `subscriptionId":"r1"`) {
		t.Fatalf("second listen's notification: %v %s", err, ev.Data)
	}
}

// TestListenAbruptClose: at shutdown the stream ends without the
// completion response.
func TestListenAbruptClose(t *testing.T) {
	t.Parallel()
	tg := serve(t, "listen-abrupt-close")
	lines := tg.listenLines(tg.modern(), "g")
	nextLine(t, lines)
	go tg.srv.Close()
	for l := range lines {
		if strings.Contains(l, `"result"`) {
			t.Fatalf("completion response %q", l)
		}
	}
}
