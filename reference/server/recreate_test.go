package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestReinitialize covers RECREATE-REINIT-200, RECREATE-STATE-KEPT and
// RECREATE-WORKS-AFTER over real HTTP.
func TestReinitialize(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	e.tool(e.c, sid, "counter_increment", nil)
	e.tool(e.c, sid, "counter_increment", nil)
	old, err := e.c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()

	// A new client instance (a refreshed page) re-initializes with the stored id.
	c := e.client()
	resp, err := c.Initialize(e.ctx(), sid)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK || resp.SessionID() != sid {
		t.Fatalf("re-initialize: HTTP %d, session %q; want 200 with %q", resp.Status, resp.SessionID(), sid)
	}
	m, err := resp.Result()
	if err != nil || m.Error != nil {
		t.Fatalf("re-initialize result: %v %v", err, m.Error)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name string }
	}
	if err := json.Unmarshal(m.Result, &init); err != nil || init.ProtocolVersion != wire.DefaultProtocolVersion || init.ServerInfo.Name == "" {
		t.Fatalf("re-initialize result is not an InitializeResult: %s (%v)", m.Result, err)
	}
	if got := e.do(c, http.MethodPost, sid, wire.Notification("notifications/initialized")).Status; got != http.StatusAccepted {
		t.Fatalf("initialized notification: HTTP %d", got)
	}
	// The old GET stream was stale and has been closed.
	if err := drain(old); err != nil {
		t.Fatalf("old GET stream: %v", err)
	}
	if got := e.tool(c, sid, "counter_increment", nil); got != "3" {
		t.Fatalf("counter after re-initialize = %s, want 3", got)
	}
	list, err := c.Call(e.ctx(), sid, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := list.Result(); err != nil || m.Error != nil || !strings.Contains(string(m.Result), "long_operation") {
		t.Fatalf("tools/list after re-initialize: %v %v %s", err, m.Error, m.Result)
	}
	st, err := c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatalf("GET after re-initialize: %v", err)
	}
	st.Close()
	if !containsLog(e, "session re-initialized") {
		t.Fatal("no 're-initialized' log line")
	}
	e.alive(1)
}

// drain reads a stream to its end; the server must end it.
func drain(st *wire.Stream) error {
	for {
		if _, err := st.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestReinitializeOwnerOnly covers RECREATE-OWNER-ONLY: another principal
// can neither re-initialize nor use the session, and the refusals leave it
// untouched (its grace period keeps running).
func TestReinitializeOwnerOnly(t *testing.T) {
	e, alice, mallory := twoPrincipals(t)
	sid := e.connect(alice)
	e.tool(alice, sid, "counter_increment", nil)
	e.clock.Step(testIdle + 1)
	e.srv.Reap() // grace starts

	if resp, _ := mallory.Initialize(e.ctx(), sid); resp.Status != http.StatusForbidden && resp.Status != http.StatusNotFound {
		t.Fatalf("re-initialize by another principal: HTTP %d, want 403 or 404", resp.Status)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		call := mallory.Request("tools/call", wire.ToolParams("counter_increment", nil, ""))
		if got := e.send(mallory, method, sid, call).Status; got != http.StatusForbidden && got != http.StatusNotFound {
			t.Fatalf("%s by another principal: HTTP %d, want 403 or 404", method, got)
		}
	}
	// Untouched: the grace period was not cancelled by the refused requests.
	e.clock.Step(testGrace)
	e.alive(0)
}

// TestReinitializeOwnerContinues: the owner's re-initialize keeps the session
// bound to the owner.
func TestReinitializeOwnerContinues(t *testing.T) {
	e, alice, mallory := twoPrincipals(t)
	sid := e.connect(alice)
	if resp, err := alice.Initialize(e.ctx(), sid); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("owner re-initialize: %v %v", resp, err)
	}
	if got := e.tool(alice, sid, "counter_increment", nil); got != "1" {
		t.Fatalf("counter = %s", got)
	}
	if _, err := mallory.ToolText(e.ctx(), sid, "echo", map[string]any{"text": "x"}); err == nil {
		t.Fatal("another principal used the session after the owner's re-initialize")
	}
}

// TestResumeWithoutInitialize covers RESUME-NO-INIT: every TCP connection of
// the session is cut (no close signal at the MCP level); a new client reuses
// the id with a GET and POSTs and no initialize.
func TestResumeWithoutInitialize(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	e.tool(e.c, sid, "counter_increment", nil)
	st, err := e.c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e.conns.CutAll()

	c := e.client()
	st2, err := c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatalf("GET after the cut: %v", err)
	}
	defer st2.Close()
	if got := e.tool(c, sid, "counter_increment", nil); got != "2" {
		t.Fatalf("counter after the cut = %s, want 2", got)
	}
	if got := e.tool(c, sid, "echo", map[string]any{"text": "still here"}); got != "still here" {
		t.Fatalf("echo = %q", got)
	}
}

// TestSecondGETReplacesFirst: a second standalone GET while the first is
// connected is accepted (never 409) and the first is closed.
func TestSecondGETReplacesFirst(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	first, err := e.c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := e.client().OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatalf("second GET: %v", err)
	}
	defer second.Close()
	if err := drain(first); err != nil {
		t.Fatalf("first GET: %v", err)
	}
}

// TestSecondGETTakesLaterMessages covers the rest of GET-LIVE-REPLACED:
// once a second GET has replaced a connected one, later messages go only to
// the new one, and what the old one was sent is not sent again.
func TestSecondGETTakesLaterMessages(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 2)
	c := e.refresh()
	first := e.openGET(c, sid, "")
	e.step()
	if got := describe(t, next(t, first, 2)); got != "progress I, log step 1 of 2" {
		t.Fatalf("first GET: %s", got)
	}
	second := e.openGET(e.client(), sid, "") // answered once the first has let go
	e.step()
	if got := describe(t, next(t, second, 2)); got != "progress II, log step 2 of 2" {
		t.Fatalf("second GET: %s", got)
	}
	// The first GET got a retry field and then nothing more.
	var rest []sse.Event
	for {
		ev, err := first.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("first GET: %v", err)
		}
		rest = append(rest, ev)
	}
	if len(rest) != 1 || !rest[0].HasRetry || rest[0].Data != "" {
		t.Fatalf("first GET after the second opened: %+v, want one retry field and no message", rest)
	}
}
