package serverchecks

import (
	"context"
	"errors"
	"net/http"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// replayChecks are the replay checks.
func replayChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "REPLAY-GAP", Level: catalogue.Res, Section: "replay", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "event-replay", Needs: []catalogue.Key{catalogue.KeyNotifying}, ResumeRequired: true,
			Summary: "Messages emitted while the client had no stream are replayed after Last-Event-ID: none lost, none twice, in order; a gap follows the cut of the call's own POST stream, and another the cut of the stream that carried it on."},
			need: func(c *target.Profile) time.Duration { return notifyNeed(c) + quiet(c) }, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				k := e.startNotifying(ctx, e.C, sid, "gap")
				e.awaitPostNotes(ctx, k, 1)
				e.needIDs(k.post)
				e.refresh()
				// A gap after the cut of the call's own first stream, as after
				// the second cut below: what the call sends meanwhile must come
				// back too.
				e.Logf("no stream for %v: the refresh window", quiet(e.Config))
				e.Pause(quiet(e.Config))
				// Back after a refresh: the standalone stream, and the call's stream
				// resumed; the next notifications come on one of them.
				get := e.openGET(ctx, e.C, sid, "")
				post := e.resume(ctx, sid, k.post)
				get.name, post.name = "the standalone GET stream", "the POST stream resumed"
				var carrier *collector
				ended := ""
				// A target that cancels a call when its stream is cut
				// (DISCONNECT-NOT-CANCEL) sends nothing after the refresh.
				e.OnPremise(catalogue.PremiseSurvivesCut, func() {
					e.await(e.baseline().Shortfall(), func() bool {
						for _, c := range []*collector{get, post} {
							if len(e.notes(c.Messages(), k)) > 0 {
								carrier = c
								return true
							}
						}
						ended = e.endedEarly(k, k.post, get, post)
						return ended != ""
					}, "a notification after the refresh on the GET stream or the resumed call stream")
					if carrier == nil {
						e.Failf("no notification after the refresh on the GET stream or the resumed call stream: %s", ended)
					}
				})
				e.needIDs(carrier)
				e.refresh()
				e.Logf("no stream for %v: the refresh window", quiet(e.Config))
				e.Pause(quiet(e.Config))
				resumed := e.resume(ctx, sid, carrier)
				resumed.name = carrier.name + ", resumed after the second refresh"
				streams := []*collector{k.post, get, post, resumed}
				// The other stream too, as a client back from a refresh resumes
				// every stream it had: a notification the server wrote to it
				// before it noticed the second cut is replayed there.
				other := get
				if carrier == get {
					other = post
				}
				if other.LastID() != "" {
					if again, err := e.resumeAsClient(ctx, sid, other, other.name+", resumed after the second refresh"); err == nil {
						streams = append(streams, again)
					}
				}
				e.awaitNotes(k, "the notifications sent in the gap, replayed", streams...)
				e.Pause(quiet(e.Config))
				// Each stream in order, and every notification once across them:
				// which of get and post carried them is the server's choice.
				e.expectDelivered(k, streams...)
			}},

		{Entry: catalogue.Entry{ID: "REPLAY-SESSION-SCOPED", Level: catalogue.Res, Section: "replay", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "event-replay", Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "A Last-Event-ID from session A presented on session B replays nothing of A."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				a := e.connect(ctx, e.C)
				k := e.startNotifying(ctx, e.C, a, "scoped-a")
				e.awaitResponse(ctx, k, k.post)
				e.needIDs(k.post)
				first := firstNoteID(e, k)
				b := e.connect(ctx, e.C)
				s, err := e.C.OpenGET(ctx, b, first)
				if se := new(wire.StatusError); errors.As(err, &se) {
					e.Expect(se.Status).To(BeNumerically("<", 500), "GET on session B with session A's Last-Event-ID %q", first)
					return
				}
				e.Expect(err).NotTo(HaveOccurred())
				replayed := e.collect("GET on B after A's id", s)
				e.Consistently(quiet(e.Config), func() []string { return e.notes(replayed.Messages(), k) }).
					Should(BeEmpty(), "session B replayed session A's notifications")
				for _, m := range replayed.Messages() {
					e.Expect(k.isResponse(m) && string(m.Result) != "").To(BeFalse(), "session B replayed session A's response")
				}
			}},

		{Entry: catalogue.Entry{ID: "REPLAY-EVICTION", Level: catalogue.Res, Section: "replay", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "event-replay", Needs: []catalogue.Key{catalogue.KeyNotifying, catalogue.KeyEventMaxAge},
			Summary: "Resuming from an evicted id gets a clear 4xx answer (not 404, no hang, no 5xx, no silent partial replay)."},
			need: func(c *target.Profile) time.Duration {
				return notifyNeed(c) + evictAfter(c)
			}, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				k := e.startNotifying(ctx, e.C, sid, "evicted")
				e.awaitResponse(ctx, k, k.post)
				e.needIDs(k.post)
				old := firstNoteID(e, k)
				e.keepAlive(ctx, sid, evictAfter(e.Config))
				s, err := e.C.OpenGET(ctx, sid, old)
				if err == nil {
					got := e.collect("GET after evicted id", s)
					e.Pause(quiet(e.Config))
					e.Failf("GET with evicted Last-Event-ID %q got a 200 SSE stream (%d events) instead of a clear error", old, len(got.Events()))
				}
				se := new(wire.StatusError)
				e.Expect(errors.As(err, &se)).To(BeTrue(), "GET with evicted Last-Event-ID: %v", err)
				e.Expect(se.Status).NotTo(Equal(http.StatusNotFound), "404 says the session is gone; it is alive, only the event was evicted")
				e.Expect(se.Status).To(BeNumerically(">=", 400))
				e.Expect(se.Status).To(BeNumerically("<", 500), "no 5xx for an evicted Last-Event-ID")
				e.Expect(se.Body).NotTo(BeEmpty(), "the answer should say why the stream cannot be resumed")
			}},
	}
}

// evictAfter is how long an event certainly takes to be evicted.
func evictAfter(c *target.Profile) time.Duration {
	t := c.Timings
	return t.EventMaxAge.D() + t.EventCleanupInterval.D() + graceSlack
}

// keepAlive keeps a session active for d with a tools/list every so often
// (half the idle threshold when declared).
func (e *env) keepAlive(ctx context.Context, sid string, d time.Duration) {
	every := time.Second
	if it := e.Config.Timings.IdleThreshold.D(); it > 0 && it/2 < every {
		every = it / 2
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		e.Pause(min(every, time.Until(end)))
		e.expectWorks(ctx, e.C, sid)
	}
}

// firstNoteID is the id of the event that carried the call's first notification.
func firstNoteID(e *env, k *call) string {
	notes := 0
	for _, ev := range k.post.Events() {
		if ms := decode(e.T, []sse.Event{ev}); len(ms) == 1 && e.isNote(ms[0], k) {
			notes++
			if ev.ID != "" {
				return ev.ID
			}
		}
	}
	if notes == 0 {
		e.Skip(report.NotOffered, notesElsewhere)
	}
	e.Skip(report.NotOffered, "the call's notifications carry no event ids")
	return ""
}
