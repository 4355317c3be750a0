package client_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestResponseOnStandaloneStream: a server that sends a call's response on
// the standalone GET stream (the spec allows it only on the call's own
// stream) still gets the call answered; the client does not drop it and
// wait on the call's resumed stream for ever.
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
	c := connectTo(t, s.options(nil))
	res, err := c.CallTool(ctx(t), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Raw); got != `{"content":[{"type":"text","text":"on the GET"}]}` {
		t.Fatalf("result content %s", got)
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
