package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// TestSettleWaitsForSlowHandling: the notifications a server put on the
// GET stream before a resumed call's result are all handed over before the
// result, even when handling each takes longer than Settle (a loaded
// machine, a slow handler): settle waits until the GET reader has caught up.
func TestSettleWaitsForSlowHandling(t *testing.T) {
	const notes = 5
	s := newScripted(t)
	callStarted := make(chan struct{})
	notesSent := make(chan struct{})
	s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		sseHeader(w)
		sseEvent(w, "c0", "")
		close(callStarted)
		<-notesSent
		return true // cut: the client resumes after c0
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		if r.Header.Get("Last-Event-ID") == "c0" {
			sseEvent(w, "c1", `{"jsonrpc":"2.0","id":"`+lastCallID(s)+`","result":{"content":[]}}`)
			return
		}
		sseEvent(w, "g0", "")
		select {
		case <-callStarted:
		case <-r.Context().Done():
			return
		}
		for i := 1; i <= notes; i++ {
			sseEvent(w, fmt.Sprintf("g%d", i), progressJSON(i))
		}
		close(notesSent)
		<-r.Context().Done()
	}
	rec := &recorder{}
	o := s.options(nil)
	o.Settle = 5 * time.Millisecond
	o.MaxReconnectDelay = 5 * time.Second // settle's bound: far above the handling
	o.OnNotification = func(n client.Notification) {
		time.Sleep(20 * time.Millisecond) // a slow handler: each takes 4 × Settle
		rec.notify(n)
	}
	c := connectTo(t, o)
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	if got := rec.count(); got != notes {
		t.Fatalf("%d of %d notifications handed over before the result", got, notes)
	}
}

// lastCallID is the id of the last tools/call the scripted server saw.
func lastCallID(s *scripted) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastCall
}
