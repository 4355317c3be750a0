package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// idSet checks EVT-ID-UNIQUE over everything a test saw on the session's
// streams: an id always names the same event (a replay repeats it with the
// same data), and a priming event's id is never seen twice.
type idSet struct {
	t    *testing.T
	data map[string]string
}

func newIDSet(t *testing.T) *idSet { return &idSet{t: t, data: map[string]string{}} }

func (s *idSet) add(evs ...sse.Event) {
	s.t.Helper()
	for _, ev := range evs {
		if !ev.HasID || ev.ID == "" {
			s.t.Fatalf("event without id: %+v", ev)
		}
		if d, seen := s.data[ev.ID]; seen && (d != ev.Data || d == "") {
			s.t.Fatalf("id %q names both %q and %q", ev.ID, d, ev.Data)
		}
		s.data[ev.ID] = ev.Data
	}
}

// TestPrimingFreshGET covers SSE-PRIMING on the standalone stream: a fresh
// GET starts at once with an event that has an id and empty data, before
// any message; resuming from that id replays exactly what followed it.
func TestPrimingFreshGET(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 3)
	c := e.refresh()
	// Nothing is pending: the priming event must come on its own.
	get, prime := e.openPrimed(c, sid, "")
	e.step()
	e.step()
	seen := next(t, get, 4)
	if got := describe(t, seen); got != "progress I, log step 1 of 3, progress II, log step 2 of 3" {
		t.Fatalf("after the priming event: %s", got)
	}
	ids := newIDSet(t)
	ids.add(prime)
	ids.add(seen...)
	get.Close()
	eventually(t, "the GET to end", func() bool { return !e.busy() })

	resumed, prime2 := e.openPrimed(c, sid, prime.ID)
	replayed := next(t, resumed, 4)
	ids.add(prime2)
	ids.add(replayed...)
	for i := range seen {
		if replayed[i] != seen[i] {
			t.Fatalf("replayed event %d = %+v, want %+v", i, replayed[i], seen[i])
		}
	}
	e.step() // and then it goes on live
	live := next(t, resumed, 2)
	if got := describe(t, live); got != "progress III, log step 3 of 3" {
		t.Fatalf("live after the replay: %s", got)
	}
	ids.add(live...)
}

// TestPrimingWithBacklog: with messages waiting for a GET, the stream still
// opens with the priming event; resuming from it yields that backlog again
// (nothing is lost if only the priming event got through) and what was
// missed after it, once each, in order. Ids stay unique across the GETs and
// a re-initialize.
func TestPrimingWithBacklog(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 3)
	c := e.refresh()
	e.step() // step 1 waits for a GET
	get, prime := e.openPrimed(c, sid, "")
	backlog := next(t, get, 2)
	if got := describe(t, backlog); got != "progress I, log step 1 of 3" {
		t.Fatalf("backlog: %s", got)
	}
	ids := newIDSet(t)
	ids.add(prime)
	ids.add(backlog...)
	get.Close()
	eventually(t, "the GET to end", func() bool { return !e.busy() })

	if resp, err := c.Initialize(e.ctx(), sid); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("re-initialize: %v %v", resp, err)
	}
	e.step() // step 2 while no GET is connected
	resumed, prime2 := e.openPrimed(c, sid, prime.ID)
	ids.add(prime2)
	replayed := next(t, resumed, 4)
	if got := describe(t, replayed); got != "progress I, log step 1 of 3, progress II, log step 2 of 3" {
		t.Fatalf("resumed from the priming event: %s", got)
	}
	ids.add(replayed...)
	e.step()
	live := next(t, resumed, 2)
	if got := describe(t, live); got != "progress III, log step 3 of 3" {
		t.Fatalf("live after the replay: %s", got)
	}
	ids.add(live...)
	resumed.Close()
	eventually(t, "the GET to end", func() bool { return !e.busy() })
	_, prime3 := e.openPrimed(c, sid, "")
	ids.add(prime3)
}

// TestPrimingEvictedBacklog: a fresh GET whose undelivered messages were
// evicted still opens (the documented advice after events_evicted), primed,
// and sends what is left.
func TestPrimingEvictedBacklog(t *testing.T) {
	e := newEnv(t, server.Config{SSEKeepAlive: -1, EventMaxAge: time.Minute})
	sid := e.connect(e.c)
	e.startLongOperation(e.c, sid, 2)
	c := e.refresh()
	e.step() // step 1 waits for a GET
	// Its two messages are held as of the clock's time now only once the
	// tool has sent them; a stray timer can satisfy a wait for waiters first.
	eventually(t, "step 1's two messages held", func() bool { return e.srv.HeldNotes(sid) == 2 })
	eventually(t, "the step-2 timer", e.clock.HasWaiters)
	e.clock.Step(2 * time.Minute) // step 2 runs now; step 1 is over a minute old
	e.srv.SweepEvents()
	get := e.openGET(c, sid, "")
	if got := describe(t, next(t, get, 2)); got != "progress II, log step 2 of 2" {
		t.Fatalf("after the eviction: %s", got)
	}
}

// TestPrimingProtocolVersion: like the go-sdk's POST streams, the standalone
// stream is primed only in sessions of protocol 2025-11-25, the revision that
// added priming events. The session's revision decides, not a request's
// header naming another supported one.
func TestPrimingProtocolVersion(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	c := e.client()
	c.ProtocolVersion = "2025-06-18"
	sid := e.connect(c)
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, c.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 2, "interval_ms": 1000}, "tok")))
	if err != nil {
		t.Fatal(err)
	}
	// Without a priming event the headers come with step 1.
	type opening struct {
		s   *wire.Stream
		err error
	}
	opened := make(chan opening, 1)
	go func() {
		s, err := c.Open(req)
		opened <- opening{s, err}
	}()
	e.step()
	o := <-opened
	if o.err != nil {
		t.Fatal(o.err)
	}
	// Both messages of step 1 are read before the cut, so none of them is
	// left for the GET stream.
	if got := describe(t, next(t, o.s, 2)); got != "progress I, log step 1 of 2" {
		t.Fatalf("2025-06-18 POST stream: %s", got)
	}
	c = e.refresh()
	c.ProtocolVersion = "2025-06-18"
	e.step()
	get := e.openStream(c, sid, "")
	if got := describe(t, next(t, get, 2)); got != "progress II, log step 2 of 2" {
		t.Fatalf("2025-06-18 stream: %s", got)
	}

	// A 2025-11-25 session whose client sends another supported revision.
	sid = e.connect(e.c)
	c = e.client()
	c.ProtocolVersion = "2025-06-18"
	e.openGET(c, sid, "") // fails unless primed
}
