package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// transportReaders counts the go-sdk transports still open: each keeps a
// goroutine waiting in its connection's Read.
func transportReaders() int { return len(goroutinesIn("(*streamableServerConn).Read(")) }

// goroutinesIn returns the ids of the goroutines with frame (a function
// name and its opening parenthesis) on their stack.
func goroutinesIn(frame string) map[string]bool {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	ids := map[string]bool{}
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(frame)) {
			id, _, _ := bytes.Cut(bytes.TrimPrefix(g, []byte("goroutine ")), []byte(" "))
			ids[string(id)] = true
		}
	}
	return ids
}

// TestConcurrentReinitialize (RECREATE-CONCURRENT): re-initializes of one
// session sent together all get an InitializeResult under its id, the
// session works afterwards, and once it is deleted no transport of any
// generation is left open.
func TestConcurrentReinitialize(t *testing.T) {
	e := newEnv(t, server.Config{})
	before := transportReaders()
	const rounds, together = 50, 4
	for round := range rounds {
		sid := e.connect(e.c)
		e.tool(e.c, sid, "counter_increment", nil)
		var wg sync.WaitGroup
		errs := make(chan string, together)
		for range together {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := e.client().Initialize(e.ctx(), sid)
				if err != nil {
					errs <- err.Error()
					return
				}
				if m, err := resp.Result(); resp.Status != http.StatusOK || resp.SessionID() != sid || err != nil || m.Error != nil {
					errs <- fmt.Sprintf("HTTP %d, session %q, body %q, %v", resp.Status, resp.SessionID(), resp.Body, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Errorf("round %d: a concurrent re-initialize of %s failed: %s", round, sid, msg)
		}
		if t.Failed() {
			t.FailNow()
		}
		if got := e.do(e.c, http.MethodPost, sid, wire.Notification("notifications/initialized")).Status; got != http.StatusAccepted {
			t.Fatalf("initialized notification: HTTP %d", got)
		}
		if got := e.tool(e.c, sid, "counter_increment", nil); got != "2" {
			t.Fatalf("counter after the re-initializes = %s, want 2", got)
		}
		if got := e.do(e.c, http.MethodDelete, sid, nil).Status; got != http.StatusNoContent {
			t.Fatalf("DELETE: HTTP %d", got)
		}
	}
	eventually(t, "every transport of the deleted sessions to close", func() bool { return transportReaders() <= before })
}
