package serverchecks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSlowReaderBlocks: while one connection of a session does not read a
// large answer, a tools/list of that session gets no answer at all; once
// that client goes away, it does.
func TestSlowReaderBlocks(t *testing.T) {
	t.Parallel()
	tg := serve(t, "slow-reader-blocks")
	sid := tg.connect(tg.c)

	u, err := url.Parse(tg.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s","method":"ping"}`, strings.Repeat("x", 1<<20))
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n"+
		"Authorization: Bearer alice-token\r\nContent-Length: %d\r\n\r\n%s", u.Host, sid, len(body), body)
	// Read into the answer (past its headers and priming event), then stop.
	conn.SetReadDeadline(time.Now().Add(waitFor))
	if _, err := io.ReadAtLeast(conn, make([]byte, 16<<10), 16<<10); err != nil {
		t.Fatalf("reading the start of the answer: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if resp, err := tg.c.Call(ctx, sid, "tools/list", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("tools/list while another answer of the session is not read: %+v, %v; want no answer", resp, err)
	}
	conn.Close()
	tg.waitUntil("tools/list once the slow reader is gone", func() bool { return tg.status(tg.c, sid) == 200 })
}
