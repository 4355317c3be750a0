package client_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
)

// TestResponseOnStandaloneStream: a server that sends a call's response on
// the standalone GET stream (the spec allows it only on the call's own
// stream) still gets the call answered; the client does not drop it and
// wait on the call's resumed stream for ever. It warns once that the
// server broke the spec.
func TestResponseOnStandaloneStream(t *testing.T) {
	s := newScripted(t)
	getOpen := make(chan struct{})
	response := make(chan string, 1)
	s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		sseHeader(w)
		sseEvent(w, "c0", "")
		<-getOpen
		response <- `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"on the GET"}]}}`
		return true // the call's stream ends without its response
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		sseHeader(w)
		if r.Header.Get("Last-Event-ID") != "" {
			<-r.Context().Done() // the resumed call stream never answers
			return
		}
		sseEvent(w, "g0", "")
		close(getOpen)
		select {
		case m := <-response:
			sseEvent(w, "g1", m)
		case <-r.Context().Done():
			return
		}
		<-r.Context().Done()
	}
	o := s.options(nil)
	var warnings nettest.SyncBuffer
	o.Logger = slog.New(slog.NewTextHandler(&warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := connectTo(t, o)
	res, err := c.CallTool(ctx(t), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Raw); got != `{"content":[{"type":"text","text":"on the GET"}]}` {
		t.Fatalf("result content %s", got)
	}
	// The warning is logged before the call returns.
	logged := warnings.String()
	if n := strings.Count(logged, "response on a stream other than its request's"); n != 1 {
		t.Fatalf("the stray-response warning was logged %d times, want once; warnings:\n%s", n, logged)
	}
	if !strings.Contains(logged, "level=WARN") {
		t.Fatalf("the stray response is not logged as a warning:\n%s", logged)
	}
}

// TestInitializeDeclaresNoCapability: the client answers no server request
// but ping, so it declares no capability (no roots, sampling, elicitation).
func TestInitializeDeclaresNoCapability(t *testing.T) {
	s := newScripted(t)
	connectTo(t, s.options(nil))
	s.mu.Lock()
	defer s.mu.Unlock()
	var params struct{ Capabilities json.RawMessage }
	if err := json.Unmarshal(s.init, &params); err != nil || string(params.Capabilities) != "{}" {
		t.Fatalf("initialize capabilities %s (%v), want {}", params.Capabilities, err)
	}
}
