package server_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
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
	conn, err := d.DialContext(e.ctx(), "tcp", strings.TrimPrefix(e.url, "http://"))
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
// until the tool stops arming its step timer: it is blocked writing to the
// stream nobody reads.
func (e *env) stepUntilStalled() {
	e.t.Helper()
	for range 10000 {
		deadline := time.Now().Add(2 * time.Second)
		for !e.clock.HasWaiters() {
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
		e.clock.Step(time.Millisecond)
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

	resumed := e.openStream(e.c, sid, primed)
	for {
		ev, err := resumed.Next()
		if err != nil {
			t.Fatalf("resumed stream ended without the result: %v", err)
		}
		if strings.Contains(ev.Data, "completed 10000 steps") {
			break
		}
	}
	e.openGET(e.c, sid, "")
	if resp := e.do(e.c, http.MethodDelete, sid, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.Status, resp.Body)
	}
}

// TestDeleteEndsStalledStream: DELETE ends the session's streams at once,
// one stalled on a client that stopped reading included, with a write
// timeout far longer than the test.
func TestDeleteEndsStalledStream(t *testing.T) {
	cfg := noKeepAlive
	cfg.WriteTimeout = time.Hour
	e := newEnvListener(t, cfg, withSmallBuffers)
	sid := e.connect(e.c)
	e.stalledCall(sid, 1)
	e.stepUntilStalled()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.c.Delete(ctx, sid)
	if err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	eventually(t, "the stalled stream to end with its session", func() bool { return e.srv.Serving() == 0 })
}
