package server_test

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// httpServer serves srv through its HTTPServer on a loopback port.
func httpServer(t *testing.T, srv *server.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(srv)
	go hs.Serve(ln)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return ln.Addr().String()
}

// closedByServer sends raw on a new connection and reads until the server
// closes it; a read that outlasts 10 s fails the test.
func closedByServer(t *testing.T, addr, raw string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server held the connection (read %q)", got)
	}
	return string(got)
}

// TestHTTPTimeouts: a body shorter than its Content-Length and an idle
// keep-alive connection are dropped after the read and idle timeouts, while
// a stream outlives the read timeout.
func TestHTTPTimeouts(t *testing.T) {
	const d = 200 * time.Millisecond
	srv, err := server.New(server.Config{ReadTimeout: d, ReadHeaderTimeout: d, IdleTimeout: d, SSEKeepAlive: -1})
	if err != nil {
		t.Fatal(err)
	}
	addr := httpServer(t, srv)

	short := closedByServer(t, addr, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	if len(short) < 12 || short[9:12] != "400" {
		t.Errorf("short body: %q, want a 400", short)
	}
	idle := closedByServer(t, addr, "DELETE /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
	if len(idle) < 12 || idle[9:12] != "400" {
		t.Errorf("idle connection: %q, want a 400 then the close", idle)
	}

	c := wire.New("http://" + addr + "/mcp")
	ctx := t.Context()
	sid, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenGET(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Next(); err != nil {
		t.Fatalf("priming event: %v", err)
	}
	// net/http lifts the read deadline once a request's body is read; a
	// stream must not end with it.
	time.Sleep(3 * d)
	if got := srv.Serving(); got != 1 {
		t.Fatalf("the GET stream was cut by the read timeout (%d requests served)", got)
	}
	if text, err := c.ToolText(ctx, sid, "echo", map[string]any{"text": "hi"}); err != nil || text != "hi" {
		t.Fatalf("echo: %q %v", text, err)
	}
}
