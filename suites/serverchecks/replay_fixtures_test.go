package serverchecks

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

func TestReplayMixesStreams(t *testing.T) {
	t.Parallel()
	tg := serve(t, "replay-mixes-streams")
	sid := tg.connect(tg.c)
	a := tg.call(tg.c, sid, "a", 3, 100)
	b := tg.call(tg.c, sid, "b", 3, 100)
	seen := a.await("a's first notification", 1, progress("a"))
	b.await("b's first notification", 1, progress("b"))
	a.Close()
	// From a's first notification, not from the last event read: on a
	// busy machine call a may have ended by now, leaving nothing after
	// its last event to resume, and so no event to put b's in front of.
	resumed := tg.open(tg.c, sid, idOf(seen, progress("a")))
	resumed.await("call b's notifications on call a's resumed stream", 1, progress("b"))
}

func TestPOSTReplayFromStart(t *testing.T) {
	t.Parallel()
	tg := serve(t, "post-replay-from-start")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "r", 4, 100)
	seen := post.await("two notifications", 2, progress("r"))
	last := post.LastID()
	post.Close()
	resumed := tg.open(tg.c, sid, last)
	evs := resumed.await("the response", 1, response)
	if evs[0].Data == "" {
		evs = evs[1:] // the resume's priming event
	}
	if evs[0].ID != seen[1].ID || evs[0].Data != seen[1].Data {
		t.Fatalf("the resumed stream starts with %+v; want the first event after priming again, %+v", evs[0], seen[1])
	}
}

func TestStandaloneReplayFromStart(t *testing.T) {
	t.Parallel()
	tg := serve(t, "standalone-replay-from-start")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	post := tg.call(tg.c, sid, "s", 4, 100)
	post.await("the first notification", 1, progress("s"))
	post.Close() // the rest goes to the GET stream
	get.await("a redirected notification", 1, progress("s"))
	seen := count(get.Events(), progress("s"))
	last := get.LastID()
	get.Close()
	resumed := tg.open(tg.c, sid, last)
	resumed.await("the notifications already seen, again", seen, progress("s"))
}

func TestReplayCrossesSessions(t *testing.T) {
	t.Parallel()
	tg := serve(t, "replay-crosses-sessions")
	a := tg.connect(tg.c)
	post := tg.call(tg.c, a, "x", 3, 0)
	evs := post.await("the response", 1, response)
	var first string
	for _, ev := range evs {
		if progress("x")(ev) {
			first = ev.ID
			break
		}
	}
	b := tg.connect(tg.c)
	replayed := tg.open(tg.c, b, first)
	replayed.await("session A's notifications on session B", 2, progress("x"))
}

func TestEventsNeverEvicted(t *testing.T) {
	t.Parallel()
	tg := serve(t, "events-never-evicted", fakeClock)
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "e", 2, 0)
	evs := post.await("the response", 1, response)
	first := evs[1].ID // after the priming event
	tg.clock.Step(servers.Config().EventMaxAge + time.Second)
	tg.srv.SweepEvents()
	replayed := tg.open(tg.c, sid, first)
	replayed.await("the old events replayed", 1, response)
}

func TestOrphanedNotificationsDropped(t *testing.T) {
	t.Parallel()
	tg := serve(t, "orphaned-notifications-dropped")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	// Long enough that the call is still going when its stream is cut,
	// with a second to spare for a slow machine.
	const steps = 20
	post := tg.call(tg.c, sid, "o", steps, 100)
	seen := post.await("the first notification", 1, progress("o"))
	post.Close()
	// The call's response, fetched by resuming its stream, says it completed.
	tg.open(tg.c, sid, idOf(seen, progress("o"))).await("the response", 1, response)
	if n := count(post.Events(), progress("o")) + count(get.Events(), progress("o")); n >= steps {
		t.Fatalf("%d of %d notifications arrived; the orphaned ones should be lost", n, steps)
	}
}

func TestOrphanedResponseOnGET(t *testing.T) {
	t.Parallel()
	tg := serve(t, "orphaned-response-on-get")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	// Long enough that the call is still going when its stream is cut,
	// with a second to spare for a slow machine.
	post := tg.call(tg.c, sid, "r", 15, 100)
	seen := post.await("the first notification", 1, progress("r"))
	post.Close()
	get.await("the orphaned call's response on the GET stream", 1, response)
	// Resuming the POST stream still yields it.
	tg.open(tg.c, sid, idOf(seen, progress("r"))).await("the response on the resumed stream", 1, response)
}

func TestPOSTStreamsWithoutIDs(t *testing.T) {
	t.Parallel()
	tg := serve(t, "post-streams-without-ids")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "n", 2, 0)
	for _, ev := range post.await("the response", 1, response) {
		if ev.HasID || strings.TrimSpace(ev.Data) == "" {
			t.Fatalf("the POST stream carries %+v; want messages without ids only", ev)
		}
	}
}

func TestStandaloneReplayMixesStreams(t *testing.T) {
	t.Parallel()
	tg := serve(t, "standalone-replay-mixes-streams")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	post := tg.call(tg.c, sid, "m", 2, 0)
	post.await("the response", 1, response)
	last := get.LastID()
	get.Close()
	resumed := tg.open(tg.c, sid, last)
	resumed.await("the POST stream's notifications, replayed on the GET stream", 2, progress("m"))
}

// TestGapNotesLost: notifications sent while a cut call has no stream
// are gone from the resume (the reference holds them for it).
func TestGapNotesLost(t *testing.T) {
	t.Parallel()
	tg := serve(t, "gap-notes-lost")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "g", 5, 100)
	seen := post.await("the first notification", 1, progress("g"))
	post.Close()
	time.Sleep(350 * time.Millisecond) // the refresh window: no stream, three notifications sent
	resumed := tg.open(tg.c, sid, idOf(seen, progress("g")))
	evs := resumed.await("the response", 1, response)
	if n := count(evs, progress("g")); n >= 4 {
		t.Fatalf("the resume replayed %d notifications; want those sent while no stream was connected lost", n)
	}
}
