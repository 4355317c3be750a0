package serverchecks

import (
	"errors"
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// reinit re-initializes sid and completes the handshake.
func (tg *fixtureServer) reinit(c *wire.Client, sid string) {
	tg.t.Helper()
	resp, err := c.Initialize(tg.ctx(), sid)
	if err != nil || resp.Status != http.StatusOK || resp.SessionID() != sid {
		tg.t.Fatalf("re-initialize %s: %v %+v", sid, err, resp)
	}
	if n := tg.send(c, http.MethodPost, sid, wire.Notification("notifications/initialized")); n.Status != http.StatusAccepted {
		tg.t.Fatalf("notifications/initialized: HTTP %d", n.Status)
	}
}

func (tg *fixtureServer) counter(sid string) string {
	tg.t.Helper()
	out, err := tg.c.ToolText(tg.ctx(), sid, "counter_increment", nil)
	if err != nil {
		tg.t.Fatal(err)
	}
	return out
}

func TestReinitRejected(t *testing.T) {
	t.Parallel()
	tg := serve(t, "reinit-rejected")
	sid := tg.connect(tg.c)
	resp, err := tg.c.Initialize(tg.ctx(), sid)
	if err != nil || resp.Status != http.StatusBadRequest {
		t.Fatalf("re-initialize: %v %+v, want HTTP 400", err, resp)
	}
}

func TestReinitLosesState(t *testing.T) {
	t.Parallel()
	tg := serve(t, "reinit-loses-state")
	sid := tg.connect(tg.c)
	tg.counter(sid)
	if got := tg.counter(sid); got != "2" {
		t.Fatalf("counter = %s, want 2", got)
	}
	tg.reinit(tg.c, sid)
	if got := tg.counter(sid); got != "1" {
		t.Fatalf("counter after re-initialize = %s, want 1 (state lost)", got)
	}
	bob := tg.client("bob-token")
	if resp, err := bob.Initialize(tg.ctx(), sid); err != nil || resp.Status != http.StatusForbidden {
		t.Fatalf("another principal's re-initialize: %v %+v, want 403", err, resp)
	}
}

func TestReinitBreaksGET(t *testing.T) {
	t.Parallel()
	tg := serve(t, "reinit-breaks-get")
	sid := tg.connect(tg.c)
	tg.reinit(tg.c, sid)
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list after re-initialize: HTTP %d", got)
	}
	_, err := tg.c.OpenGET(tg.ctx(), sid, "")
	if se := new(wire.StatusError); !errors.As(err, &se) || se.Status != http.StatusConflict {
		t.Fatalf("GET after re-initialize: %v, want HTTP 409", err)
	}
}

func TestSessionsUnbound(t *testing.T) {
	t.Parallel()
	tg := serve(t, "sessions-unbound")
	sid := tg.connect(tg.c)
	bob := tg.client("bob-token")
	if got := tg.status(bob, sid); got != http.StatusOK {
		t.Fatalf("tools/list on alice's session with bob's token: HTTP %d, want 200", got)
	}
	mallory := tg.client("no-such-token")
	if got := tg.status(mallory, sid); got != http.StatusUnauthorized {
		t.Fatalf("an invalid token: HTTP %d, want 401", got)
	}
}

func TestNewGETNeedsInit(t *testing.T) {
	t.Parallel()
	tg := serve(t, "new-get-needs-init")
	sid := tg.connect(tg.c)
	first := tg.open(tg.c, sid, "")
	tg.await(first, "the priming event", 1)
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list with one GET stream: HTTP %d", got)
	}
	// A reloaded page's stream arrives before the server has seen the old one go.
	tg.await(tg.open(tg.c, sid, ""), "the priming event", 1)
	if got := tg.status(tg.c, sid); got != http.StatusBadRequest {
		t.Fatalf("tools/list after a GET that replaced another: HTTP %d, want 400", got)
	}
	tg.reinit(tg.c, sid)
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list after initialize: HTTP %d", got)
	}
}

// TestReinitNotConcurrent: a second re-initialize right after the first
// gets 409.
func TestReinitNotConcurrent(t *testing.T) {
	t.Parallel()
	tg := serve(t, "reinit-not-concurrent")
	sid := tg.connect(tg.c)
	for i, want := range []int{http.StatusOK, http.StatusConflict} {
		if resp, err := tg.c.Initialize(tg.ctx(), sid); err != nil || resp.Status != want {
			t.Fatalf("re-initialize %d: %v %+v, want HTTP %d", i+1, err, resp, want)
		}
	}
}
