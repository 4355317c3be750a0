package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/server"
)

// alive reports whether the table still holds a session, without touching it
// (any request would count as activity).
func (e *env) alive(want int) {
	e.t.Helper()
	if got := e.srv.SessionCount(); got != want {
		e.t.Fatalf("SessionCount = %d, want %d", got, want)
	}
}

// TestGraceExpires covers GRACE-EXPIRES: gone exactly idle threshold + grace
// period after the last activity (reaped on the first tick past the threshold).
func TestGraceExpires(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	e.tool(e.c, sid, "counter_increment", nil)

	e.clock.Step(testIdle) // idle for exactly the threshold: not yet
	e.srv.Reap()
	e.clock.Step(testGrace)
	e.alive(1)

	e.clock.Step(time.Millisecond) // now past the threshold
	e.srv.Reap()
	e.clock.Step(testGrace - time.Millisecond)
	e.alive(1)
	e.clock.Step(time.Millisecond)
	e.alive(0)

	if got := e.do(e.c, http.MethodPost, sid, e.c.Request("tools/list", nil)).Status; got != http.StatusNotFound {
		t.Fatalf("after expiry: HTTP %d, want 404", got)
	}
	// All state went with it: a new session starts the counter afresh.
	fresh := e.connect(e.c)
	if got := e.tool(e.c, fresh, "counter_increment", nil); got != "1" {
		t.Fatalf("counter on a new session = %s, want 1", got)
	}
}

// TestGraceIdleSurvives covers GRACE-IDLE-SURVIVES: silent for just under
// threshold + grace, the session still works and keeps its state.
func TestGraceIdleSurvives(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	e.tool(e.c, sid, "counter_increment", nil)
	e.clock.Step(testIdle + time.Millisecond)
	e.srv.Reap()
	e.clock.Step(testGrace - time.Millisecond)
	if got := e.tool(e.c, sid, "counter_increment", nil); got != "2" {
		t.Fatalf("counter = %s, want 2", got)
	}
}

// TestGraceActivityResets covers GRACE-ACTIVITY-RESETS with POST, GET and
// DELETE-less use at intervals shorter than the threshold.
func TestGraceActivityResets(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	for i := 0; i < 20; i++ {
		e.clock.Step(testIdle - time.Millisecond)
		e.srv.Reap()
		if i%2 == 0 {
			e.tool(e.c, sid, "echo", map[string]any{"text": "x"})
		} else {
			st, err := e.c.OpenGET(e.ctx(), sid, "")
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			st.Close()
			eventually(t, "the GET to end", func() bool { return e.srv.SessionCount() == 1 && !e.busy() })
		}
	}
	e.clock.Step(testGrace)
	e.alive(1)
	if containsLog(e, "grace started") {
		t.Fatal("a session in regular use entered its grace period")
	}
}

// TestGraceLiveStream covers GRACE-LIVE-STREAM: a connected GET keeps a
// silent session alive through any number of reaper ticks.
func TestGraceLiveStream(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	st, err := e.c.OpenGET(e.ctx(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 5; i++ {
		e.clock.Step(testIdle + testGrace)
		e.srv.Reap()
	}
	e.clock.Step(testGrace)
	e.alive(1)
	// Once the stream is gone the session becomes reapable.
	st.Close()
	eventually(t, "the server to notice the closed GET", func() bool { return !e.busy() })
	e.clock.Step(testIdle + time.Millisecond)
	e.srv.Reap()
	e.clock.Step(testGrace)
	e.alive(0)
}

// TestGraceReconnectCancels covers GRACE-RECONNECT-CANCELS, by re-initialize
// and by an ordinary request.
func TestGraceReconnectCancels(t *testing.T) {
	for _, how := range []string{"re-initialize", "request"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, server.Config{})
			sid := e.connect(e.c)
			e.tool(e.c, sid, "counter_increment", nil)
			e.clock.Step(testIdle + time.Millisecond)
			e.srv.Reap()
			e.clock.Step(testGrace / 2)
			if how == "re-initialize" {
				resp, err := e.c.Initialize(e.ctx(), sid)
				if err != nil || resp.Status != http.StatusOK {
					t.Fatalf("re-initialize: %v %v", resp, err)
				}
			} else {
				e.tool(e.c, sid, "echo", map[string]any{"text": "back"})
			}
			e.clock.Step(testGrace) // the old expiry time passes
			e.alive(1)
			if got := e.tool(e.c, sid, "counter_increment", nil); got != "2" {
				t.Fatalf("counter = %s, want 2", got)
			}
			if !containsLog(e, "grace cancelled") {
				t.Fatal("no 'grace cancelled' log line")
			}
		})
	}
}

// TestReaperRunsOnTicks: Run drives the reaper from the clock's ticker.
func TestReaperRunsOnTicks(t *testing.T) {
	e := newEnv(t, server.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.srv.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	e.connect(e.c)
	// Tick the fake clock one reaper interval at a time, giving the reaper
	// goroutine a moment to take each tick, until the session expires.
	deadline := time.Now().Add(10 * time.Second)
	for e.srv.SessionCount() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("session never expired under Run")
		}
		e.clock.Step(testReaper)
		time.Sleep(time.Millisecond)
	}
	if !containsLog(e, "grace started") || !containsLog(e, "session expired") {
		t.Fatalf("missing lifecycle lines in log:\n%s", e.logs.String())
	}
}

// busy reports whether the server still serves a request (a closed GET is
// only noticed when the server's read sees EOF).
func (e *env) busy() bool { return e.srv.InFlight() > 0 }

func containsLog(e *env, s string) bool { return strings.Contains(e.logs.String(), s) }

// TestActivityFromRequestEnd: a request's end is activity, so a session
// whose call ran longer than the idle threshold is not idle when it ends.
func TestActivityFromRequestEnd(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	st := e.startLongOperation(e.c, sid, 3) // 3 s on the fake clock, past testIdle
	for range 3 {
		e.step()
	}
	for {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("before the result: %v", err)
		}
		if strings.Contains(ev.Data, `"result"`) {
			break
		}
	}
	eventually(t, "the call's request to end", func() bool { return !e.busy() })
	e.srv.Reap() // idle since the call ended: not past the threshold
	e.clock.Step(testGrace)
	e.alive(1)
}
