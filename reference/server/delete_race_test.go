package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestE2EDeleteRacingRequests: a DELETE sent together with a re-initialize, a
// tool call and a tools/list on the same session never costs any of them
// its answer. Each gets a status line and a complete body: the DELETE 204
// (or 404), the others their result or a JSON-RPC error (404 once the
// session is gone), never a closed connection or an empty 200, and never
// two answers. Every other round the call's id is a string the client
// escapes ("a\u003cb…") and the go-sdk echoes unescaped ("a<b…"): the
// answer is still recognised as the call's, so a DELETE after it does not
// add a second one.
func TestE2EDeleteRacingRequests(t *testing.T) {
	e := newEnv(t, server.Config{AnonymousSessionRate: 1e6, AnonymousSessionBurst: 1000})
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		sid := e.connect(e.c)
		requests := map[string]func() (*wire.Response, error){
			"DELETE":     func() (*wire.Response, error) { return e.c.Delete(e.ctx(), sid) },
			"initialize": func() (*wire.Response, error) { return e.c.Initialize(e.ctx(), sid) },
			"tools/call": func() (*wire.Response, error) {
				call := e.c.Request("tools/call", wire.ToolParams("counter_increment", nil, ""))
				if round%2 == 1 {
					call["id"] = fmt.Sprintf("a<b%d", round) // json.Marshal sends "a\u003cb…"
				}
				return e.c.Post(e.ctx(), sid, call)
			},
			"tools/list": func() (*wire.Response, error) { return e.c.Call(e.ctx(), sid, "tools/list", map[string]any{}) },
		}
		var wg sync.WaitGroup
		errs := make(chan string, len(requests))
		start := make(chan struct{})
		for name, send := range requests {
			wg.Go(func() {
				<-start
				resp, err := send()
				if msg := raceAnswerFault(name, resp, err); msg != "" {
					errs <- msg
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Errorf("round %d: %s", round, msg)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}

// raceAnswerFault says what is wrong with one answer of a DELETE race, or
// "" when it is whole.
func raceAnswerFault(name string, resp *wire.Response, err error) string {
	if err != nil {
		return fmt.Sprintf("%s: no answer: %v", name, err)
	}
	if name == "DELETE" {
		if resp.Status != http.StatusNoContent && resp.Status != http.StatusNotFound && resp.Status != http.StatusOK {
			return fmt.Sprintf("DELETE: HTTP %d %q", resp.Status, resp.Body)
		}
		return ""
	}
	msgs, merr := resp.Messages()
	if merr != nil || len(msgs) == 0 {
		return fmt.Sprintf("%s: HTTP %d (%s) with no JSON-RPC message (%v): %q", name, resp.Status, resp.Header.Get("Content-Type"), merr, resp.Body)
	}
	answers := 0
	for _, m := range msgs {
		if m.Method == "" && (m.Error != nil || len(m.Result) > 0) {
			answers++
		}
	}
	if answers > 1 {
		raw, _ := json.Marshal(msgs)
		return fmt.Sprintf("%s: HTTP %d, %d answers to one request: %s", name, resp.Status, answers, raw)
	}
	last := msgs[len(msgs)-1]
	if last.Error == nil && len(last.Result) == 0 {
		raw, _ := json.Marshal(last)
		return fmt.Sprintf("%s: HTTP %d, last message is neither a result nor an error: %s", name, resp.Status, raw)
	}
	return ""
}
