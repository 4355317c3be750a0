package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// allFourSteps is what a 4-step long_operation sends, in order, response last.
const allFourSteps = "progress I, log step 1 of 4, progress II, log step 2 of 4, progress III, log step 3 of 4, progress IIII, log step 4 of 4, result completed 4 steps"

// TestDeliveryAfterCut covers the delivery rule after a cut with real TCP
// connections: a cut call's undelivered messages go to the first stream
// that can carry them, the standalone GET (notifications only) or the
// resumed POST stream (notifications, then the response), each once, in
// order, none after the response. Both orders (GET first, resume first),
// and both cases: the server noticed the cut before the next notification
// (the connection is closed), or it did not (the client abandons a
// connection that stays open, and the server goes on writing to it, so the
// resume continues that stream).
func TestDeliveryAfterCut(t *testing.T) {
	for _, tc := range []struct {
		name              string
		getFirst, noticed bool
	}{
		{"resume first, noticed", false, true},
		{"resume first, unnoticed", false, false},
		{"GET first, noticed", true, true},
		{"GET first, unnoticed", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, noKeepAlive)
			sid := e.connect(e.c)
			post := e.startLongOperation(e.c, sid, 4)
			e.step()
			seen := next(t, post, 2) // step 1 reached the client
			last := seen[1].ID
			var c *wire.Client
			if tc.noticed {
				c = e.refresh() // step 2 then finds no stream
			} else {
				// The client gives up on the POST without closing it; the
				// server writes step 2 to it, which the client never reads.
				c = e.client()
			}
			e.step()
			if !tc.noticed {
				written(t, post, "progress II, log step 2 of 4")
			}
			eventually(t, "step 3's timer", e.clock.HasWaiters)

			var get, resumed *wire.Stream
			if tc.getFirst {
				get = e.openGET(c, sid, "")
				e.step()
				if !tc.noticed {
					written(t, post, "progress III, log step 3 of 4")
				}
				eventually(t, "step 4's timer", e.clock.HasWaiters)
				resumed = e.openStream(c, sid, last)
				e.step()
			} else {
				resumed = e.openStream(c, sid, last)
				e.step()
				e.step()
				get = e.openGET(c, sid, "")
			}
			onResumed := messages(t, resumed) // ends after the response
			if !tc.noticed {
				// The resume ended the request that still held the stream.
				if rest := messages(t, post); len(rest) > 0 {
					t.Fatalf("the abandoned POST went on after the resume: %s", describe(t, rest))
				}
			}
			// DELETE ends the GET stream: what it carried is all there is.
			e.do(c, http.MethodDelete, sid, nil)
			onGET := messages(t, get)
			if got := describe(t, append(append(seen, onGET...), onResumed...)); got != allFourSteps {
				t.Fatalf("client saw %q (GET: %s; resumed: %s), want %q", got, describe(t, onGET), describe(t, onResumed), allFourSteps)
			}
			for _, ev := range onGET {
				if isResponse(t, ev) {
					t.Fatal("the response came on the standalone GET stream")
				}
			}
		})
	}
}

// TestHeldResponseWaitsForGET: a call that ends while no stream is connected
// keeps its response until its notifications have gone somewhere, so a
// standalone GET opened afterwards still gets them, and the resumed POST
// stream gets the response alone.
func TestHeldResponseWaitsForGET(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 2)
	e.step()
	seen := next(t, post, 2)
	c := e.refresh()
	e.step() // the last step, while nothing is connected
	get := e.openGET(c, sid, "")
	if got := describe(t, next(t, get, 2)); got != "progress II, log step 2 of 2" {
		t.Fatalf("standalone GET: %s", got)
	}
	if got := describe(t, messages(t, e.openStream(c, sid, seen[1].ID))); got != "result completed 2 steps" {
		t.Fatalf("resumed POST stream: %s", got)
	}
}

// written reads from a stream the client has abandoned what the server
// wrote to it, to know it was written there.
func written(t *testing.T, st *wire.Stream, want string) {
	t.Helper()
	if got := describe(t, next(t, st, 2)); got != want {
		t.Fatalf("written to the abandoned POST: %s, want %s", got, want)
	}
}

// messages reads st to its end and returns its message events (no priming
// events, no retry hints).
func messages(t *testing.T, st *wire.Stream) []sse.Event {
	t.Helper()
	var out []sse.Event
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading a stream to its end: %v", err)
		}
		if ev.Data != "" {
			out = append(out, ev)
		}
	}
}

func isResponse(t *testing.T, ev sse.Event) bool {
	t.Helper()
	var m wire.Message
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		t.Fatalf("event %q: %v", ev.Data, err)
	}
	return m.IsResponse()
}
