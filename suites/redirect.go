package suites

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// replacedGETWait bounds how long the server may take to close a replaced GET.
const replacedGETWait = 5 * time.Second

// streamResilienceChecks registers the stream resilience checks.
func streamResilienceChecks() {
	check("GET-STALE-REPLACED", nil, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		e.openGET(ctx, e.C, sid, "")
		e.Freeze()
		s, err := e.C.OpenGET(ctx, sid, "")
		Expect(err).NotTo(HaveOccurred(), "a new GET while the previous GET connection is half-open")
		collect("second GET", s)
		Expect(s.Resp.StatusCode).To(Equal(http.StatusOK))
	})

	check("GET-LIVE-REPLACED", nil, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		first := e.openGET(ctx, e.C, sid, "")
		s, err := e.C.OpenGET(ctx, sid, "")
		Expect(err).NotTo(HaveOccurred(), "a new GET while the previous one is connected")
		collect("second GET", s)
		Expect(waitUntil(ctx, replacedGETWait, first.Ended)).To(BeTrue(),
			"the first GET stream was still open %v after a second one replaced it", replacedGETWait)
	})

	check("REDIRECT-ORPHANED", notifyBudget, func(ctx context.Context, e *Env) {
		_, k, get := e.orphan(ctx)
		eventually(ctx, func() int { return len(e.notes(k.post.Messages(), k)) + len(e.notes(get.Messages(), k)) }).
			Should(BeNumerically(">=", e.Config.Tools.Notifying.Notifications), "the orphaned notifications on the new GET stream")
		pause(ctx, quiet(e.Config))
		e.expectSequence(e.notes(k.post.Messages(), k), e.notes(get.Messages(), k))
	})

	check("REDIRECT-NO-RESPONSE", notifyBudget, func(ctx context.Context, e *Env) {
		sid, k, get := e.orphan(ctx)
		waitUntil(ctx, 2*toolRun(e.Config), func() bool {
			return len(e.notes(k.post.Messages(), k))+len(e.notes(get.Messages(), k)) >= e.Config.Tools.Notifying.Notifications
		})
		pause(ctx, quiet(e.Config))
		for _, m := range get.Messages() {
			Expect(k.isResponse(m)).To(BeFalse(), "the orphaned request's response was sent on the standalone GET stream")
		}
		e.needIDs(k.post)
		resumed := e.resume(ctx, sid, k.post.LastID())
		e.awaitResponse(ctx, k, resumed)
	})
}

// orphan starts the notifying tool, cuts every connection after its first
// notification (a page refresh) and opens a new standalone GET stream
// without Last-Event-ID, where the rest of its notifications should arrive.
func (e *Env) orphan(ctx context.Context) (string, *call, *collector) {
	sid := e.connect(ctx, e.C)
	e.openGET(ctx, e.C, sid, "")
	k := e.startNotifying(ctx, e.C, sid, "orphan")
	e.awaitPostNotes(ctx, k, 1)
	e.Refresh()
	return sid, k, e.openGET(ctx, e.C, sid, "")
}

// replayChecks registers the replay checks.
func replayChecks() {
	check("REPLAY-GAP", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		k := e.startNotifying(ctx, e.C, sid, "gap")
		e.awaitPostNotes(ctx, k, 1)
		e.needIDs(k.post)
		e.Refresh()
		// Back after a refresh: the standalone stream, and the call's stream
		// resumed; the next notifications come on one of them.
		get := e.openGET(ctx, e.C, sid, "")
		post := e.resume(ctx, sid, k.post.LastID())
		var carrier *collector
		eventually(ctx, func() bool {
			for _, c := range []*collector{get, post} {
				if len(e.notes(c.Messages(), k)) > 0 {
					carrier = c
					return true
				}
			}
			return false
		}).Should(BeTrue(), "a notification after the refresh on the GET stream or the resumed call stream")
		e.needIDs(carrier)
		e.Refresh()
		e.Logf("no stream for %v: the refresh window", quiet(e.Config))
		pause(ctx, quiet(e.Config))
		resumed := e.resume(ctx, sid, carrier.LastID())
		eventually(ctx, func() int {
			n := 0
			for _, c := range []*collector{k.post, get, post, resumed} {
				n += len(e.notes(c.Messages(), k))
			}
			return n
		}).Should(BeNumerically(">=", e.Config.Tools.Notifying.Notifications), "the notifications sent in the gap, replayed")
		pause(ctx, quiet(e.Config))
		// Only one of get and post carried notifications, so this is their order.
		e.expectSequence(e.notes(k.post.Messages(), k), e.notes(get.Messages(), k), e.notes(post.Messages(), k), e.notes(resumed.Messages(), k))
	})

	check("REPLAY-SESSION-SCOPED", notifyBudget, func(ctx context.Context, e *Env) {
		a := e.connect(ctx, e.C)
		k := e.startNotifying(ctx, e.C, a, "scoped-a")
		e.awaitResponse(ctx, k, k.post)
		e.needIDs(k.post)
		first := firstNoteID(e, k)
		b := e.connect(ctx, e.C)
		s, err := e.C.OpenGET(ctx, b, first)
		if se := new(wire.StatusError); errors.As(err, &se) {
			Expect(se.Status).To(BeNumerically("<", 500), "GET on session B with session A's Last-Event-ID %q", first)
			return
		}
		Expect(err).NotTo(HaveOccurred())
		replayed := collect("GET on B after A's id", s)
		consistently(ctx, quiet(e.Config), func() []string { return e.notes(replayed.Messages(), k) }).
			Should(BeEmpty(), "session B replayed session A's notifications")
		for _, m := range replayed.Messages() {
			Expect(k.isResponse(m) && string(m.Result) != "").To(BeFalse(), "session B replayed session A's response")
		}
	})

	check("REPLAY-EVICTION", func(c *target.Config) time.Duration {
		return notifyBudget(c) + 2*evictAfter(c)
	}, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		k := e.startNotifying(ctx, e.C, sid, "evicted")
		e.awaitResponse(ctx, k, k.post)
		e.needIDs(k.post)
		old := firstNoteID(e, k)
		e.keepAlive(ctx, sid, evictAfter(e.Config))
		s, err := e.C.OpenGET(ctx, sid, old)
		if err == nil {
			got := collect("GET after evicted id", s)
			pause(ctx, quiet(e.Config))
			Fail(fmt.Sprintf("GET with evicted Last-Event-ID %q got a 200 SSE stream (%d events) instead of a clear error", old, len(got.Events())))
		}
		se := new(wire.StatusError)
		Expect(errors.As(err, &se)).To(BeTrue(), "GET with evicted Last-Event-ID: %v", err)
		Expect(se.Status).NotTo(Equal(http.StatusNotFound), "404 says the session is gone; it is alive, only the event was evicted")
		Expect(se.Status).To(BeNumerically(">=", 400))
		Expect(se.Status).To(BeNumerically("<", 500), "no 5xx for an evicted Last-Event-ID")
		Expect(se.Body).NotTo(BeEmpty(), "the answer should say why the stream cannot be resumed")
	})
}

// evictAfter is how long an event certainly takes to be evicted.
func evictAfter(c *target.Config) time.Duration {
	t := c.Timings
	return t.EventMaxAge.D() + t.EventCleanupInterval.D() + graceSlack
}

// keepAlive keeps a session active for d with a tools/list every so often
// (half the idle threshold when declared).
func (e *Env) keepAlive(ctx context.Context, sid string, d time.Duration) {
	every := time.Second
	if it := e.Config.Timings.IdleThreshold.D(); it > 0 && it/2 < every {
		every = it / 2
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		pause(ctx, min(every, time.Until(end)))
		e.expectWorks(ctx, e.C, sid)
	}
}

// firstNoteID is the id of the event that carried the call's first notification.
func firstNoteID(e *Env, k *call) string {
	notes := 0
	for _, ev := range k.post.Events() {
		if ms := decode([]sse.Event{ev}); len(ms) == 1 && e.isNote(ms[0], k) {
			notes++
			if ev.ID != "" {
				return ev.ID
			}
		}
	}
	if notes == 0 {
		Skip(notesElsewhere)
	}
	Skip("the call's notifications carry no event ids")
	return ""
}
