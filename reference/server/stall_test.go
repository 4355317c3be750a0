package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// smallBuffers shrinks the server side's socket send buffers, so a client
// that stops reading stalls the server's writes after a few kilobytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

func withSmallBuffers(ln net.Listener) net.Listener { return smallBuffers{ln} }

// openStalled sends req on a connection with a small receive buffer, reads
// the response head and the first SSE event, and then reads nothing more:
// a client that stopped reading. The connection is closed at cleanup.
func (e *env) openStalled(req *http.Request) sse.Event {
	e.t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
	}}
	conn, err := d.DialContext(e.ctx(), "tcp", req.URL.Host)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	if err := req.Write(conn); err != nil {
		e.t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), req)
	if err != nil || resp.StatusCode != http.StatusOK {
		e.t.Fatalf("stalled request: %v %v", resp, err)
	}
	ev, err := sse.NewReader(resp.Body).Next()
	if err != nil {
		e.t.Fatalf("first event: %v", err)
	}
	return ev
}

// stalledCall starts a long_operation of 10000 steps, interval_ms apart,
// on a POST stream the client does not read, and returns the stream's
// priming event id. Its notifications soon overflow the socket buffers.
func (e *env) stalledCall(sid string, intervalMS int) string {
	e.t.Helper()
	req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, e.c.Request("tools/call",
		wire.ToolParams("long_operation", map[string]any{"steps": 10000, "interval_ms": intervalMS}, "tok")))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.openStalled(req).ID
}

// stepUntilStalled steps the fake clock for a stalledCall with an interval
// until the call stops storing messages for 2s: it is blocked writing to the
// stream nobody reads. (Counting the clock's waiters would not do: a Host's
// sweeps wait on it too.)
func (e *env) stepUntilStalled() {
	e.t.Helper()
	last, since := -1, time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if n := e.srv.EventStats().Events; n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 2*time.Second {
			return
		}
		e.clock.Step(time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	e.t.Fatal("the call never stalled on its unread stream")
}

// TestStalledStreamDeclaredDead: a POST stream whose client stopped reading
// is ended by the server once a write outlasts the write timeout; the call
// goes on, what the stream missed stays replayable, and the session keeps
// working.
func TestStalledStreamDeclaredDead(t *testing.T) {
	cfg := noKeepAlive
	cfg.WriteTimeout = 200 * time.Millisecond
	e := newEnvListener(t, cfg, withSmallBuffers)
	sid := e.connect(e.c)
	primed := e.stalledCall(sid, 0)
	eventually(t, "the server to end the stalled stream", func() bool { return e.srv.Serving() == 0 })

	// The resumed stream has the same 200ms write timeout: on a busy
	// machine this test's reader can fall that far behind, and the server
	// ends that stream too. A client then resumes again from the last id
	// it read, as this one does, until the result comes.
	last, resumes := primed, 0
	for found := false; !found; {
		resumes++
		if resumes > 20 {
			t.Fatalf("the result did not come in %d resumes", resumes-1)
		}
		resumed := e.openStream(e.c, sid, last)
		for {
			ev, err := resumed.Next()
			if err != nil {
				t.Logf("resumed stream ended after event %q (%v): resuming from it", last, err)
				break
			}
			if ev.ID != "" {
				last = ev.ID
			}
			if strings.Contains(ev.Data, "completed 10000 steps") {
				found = true
				break
			}
		}
		resumed.Close()
	}
	e.openGET(e.c, sid, "")
	if resp := e.do(e.c, http.MethodDelete, sid, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.Status, resp.Body)
	}
}

// TestStalledSessionReaped: a session whose only stream stalled does not
// stay busy for ever: once the server ends the stream, the session goes idle
// and expires after the idle threshold and grace period like any other.
func TestStalledSessionReaped(t *testing.T) {
	cfg := noKeepAlive
	cfg.WriteTimeout = 200 * time.Millisecond
	e := newEnvListener(t, cfg, withSmallBuffers)
	sid := e.connect(e.c)
	e.stalledCall(sid, 0)
	eventually(t, "the server to end the stalled stream", func() bool { return e.srv.Serving() == 0 })
	e.clock.Step(testIdle + time.Millisecond)
	e.srv.Reap()
	e.clock.Step(testGrace)
	e.alive(0)
	if resp := e.do(e.c, http.MethodPost, sid, e.c.Request("tools/list", nil)); resp.Status != http.StatusNotFound {
		t.Fatalf("after idle + grace: HTTP %d %s, want 404", resp.Status, resp.Body)
	}
}

// TestDeleteEndsStalledStream: DELETE ends the session's streams at once,
// one stalled on a client that stopped reading included, with a write
// timeout far longer than the test; and it ends the call that was blocked
// writing to that stream, whose steps would otherwise go on.
func TestDeleteEndsStalledStream(t *testing.T) {
	cfg := noKeepAlive
	cfg.WriteTimeout = time.Hour
	e := newEnvListener(t, cfg, withSmallBuffers)
	const tool = "tools.longOperation("
	before := goroutinesIn(tool) // calls of earlier tests may still be ending
	sid := e.connect(e.c)
	e.stalledCall(sid, 1)
	e.stepUntilStalled()
	var call string
	for id := range goroutinesIn(tool) {
		if !before[id] {
			call = id
		}
	}
	if call == "" {
		t.Fatal("no long_operation running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.c.Delete(ctx, sid)
	if err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	eventually(t, "the stalled stream to end with its session", func() bool { return e.srv.Serving() == 0 })
	eventually(t, "the call to end with its session", func() bool { return !goroutinesIn(tool)[call] })
	if e.clock.HasWaiters() {
		t.Fatal("the call's step timer is still armed")
	}
}

// newStalledGET serves a session on a Host whose write timeout is far longer
// than the test, opens the session's standalone GET on a connection the
// client never reads, cuts a long_operation's POST so that its notifications
// go to that GET, and steps the call until it blocks writing to it.
func newStalledGET(t *testing.T) (*env, *server.Host, string) {
	t.Helper()
	cfg, fc, logs := testConfig(server.Config{SSEKeepAlive: -1, WriteTimeout: time.Hour})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHost(cfg, withSmallBuffers(ln), server.HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	e := &env{t: t, srv: h.Server(), url: h.URL(), clock: fc, conns: &nettest.ConnTracker{}, logs: logs}
	e.c = e.client()
	sid := e.connect(e.c)
	greq, err := e.c.NewHTTPRequest(e.ctx(), http.MethodGet, sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.openStalled(greq)

	pctx, cut := context.WithCancel(e.ctx())
	preq, err := e.c.NewHTTPRequest(pctx, http.MethodPost, sid, e.c.Request("tools/call",
		wire.ToolParams("long_operation", map[string]any{"steps": 10000, "interval_ms": 1}, "tok")))
	if err != nil {
		t.Fatal(err)
	}
	post, err := e.c.Open(preq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := post.Next(); err != nil {
		t.Fatalf("priming event: %v", err)
	}
	cut()
	eventually(t, "the server to notice the cut", func() bool { return e.srv.Serving() == 1 })
	e.stepUntilStalled()
	return e, h, sid
}

// within fails the test unless f returns nil within d. f does not use t:
// when it blocks, it may return after the test has ended.
func within(t *testing.T, what string, d time.Duration, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s blocked for more than %v", what, d)
	}
}

// TestStalledStandaloneGET: a standalone GET whose client stopped reading,
// with a call blocked writing its notifications to it, does not wedge the
// session: a replacing GET takes over (and gets the call's next
// notifications), DELETE ends the stalled stream, and shutdown is bounded
// (sessions within the host's halt timeout, then the HTTP drain).
func TestStalledStandaloneGET(t *testing.T) {
	// Beside the package's other tests: it mostly waits on its own server.
	t.Parallel()
	t.Run("replacing GET", func(t *testing.T) {
		e, _, sid := newStalledGET(t)
		var st *wire.Stream
		within(t, "the replacing GET", 5*time.Second, func() (err error) {
			st, err = e.client().OpenGET(e.ctx(), sid, "")
			return err
		})
		defer st.Close()
		stop := make(chan struct{})
		defer close(stop)
		go func() { // the call's next steps
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				if e.clock.HasWaiters() {
					e.clock.Step(time.Millisecond)
				}
			}
		}()
		for {
			ev, err := st.Next()
			if err != nil {
				t.Fatalf("replacing GET ended before a notification of the call: %v", err)
			}
			if strings.Contains(ev.Data, "notifications/progress") {
				return
			}
		}
	})
	t.Run("DELETE", func(t *testing.T) {
		e, _, sid := newStalledGET(t)
		within(t, "DELETE", 5*time.Second, func() error {
			resp, err := e.c.Delete(e.ctx(), sid)
			if err == nil && resp.Status != http.StatusNoContent {
				err = fmt.Errorf("HTTP %d %s", resp.Status, resp.Body)
			}
			return err
		})
		eventually(t, "the stalled GET to end with its session", func() bool { return e.srv.Serving() == 0 })
	})
	t.Run("shutdown", func(t *testing.T) {
		e, h, _ := newStalledGET(t)
		within(t, "Host.Shutdown", 12*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return h.Shutdown(ctx)
		})
		if n := e.srv.Serving(); n != 0 {
			t.Fatalf("%d requests still served after shutdown", n)
		}
	})
}
