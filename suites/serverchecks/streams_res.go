package serverchecks

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

// replacedGETWait bounds how long the server may take to close a replaced GET.
const replacedGETWait = 5 * time.Second

// streamResilienceChecks are the stream resilience checks.
func streamResilienceChecks() []def {
	return []def{
		{Entry: toolAsDeclared, need: notifyNeed, body: func(ctx context.Context, e *env) { e.asDeclared(ctx) }},

		{Entry: catalogue.Entry{ID: "GET-STALE-REPLACED", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "stale-get-replacement",
			Summary: "A new GET while the previous GET connection is half-open is accepted (200), never 409."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				e.openGET(ctx, e.C, sid, "")
				e.freeze()
				s, err := e.C.OpenGET(ctx, sid, "")
				e.Expect(err).NotTo(HaveOccurred(), "a new GET while the previous GET connection is half-open")
				e.collect("second GET", s)
				e.Expect(s.Resp.StatusCode).To(Equal(http.StatusOK))
			}},

		{Entry: catalogue.Entry{ID: "GET-LIVE-REPLACED", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "stale-get-replacement",
			Summary: "A new GET while the previous one is connected is accepted, the old one is closed, and later messages go to the new one (the notifications of a call whose POST stream is cut, where a session with one GET stream gets them)."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				first := e.openGET(ctx, e.C, sid, "")
				first.name = "the first GET stream"
				s, err := e.C.OpenGET(ctx, sid, "")
				e.Expect(err).NotTo(HaveOccurred(), "a new GET while the previous one is connected")
				second := e.collect("the second GET stream", s)
				e.Expect(e.WaitUntil(replacedGETWait, first.Ended)).To(BeTrue(),
					"the first GET stream was still open %v after a second one replaced it", replacedGETWait)
				e.laterMessagesOnNew(ctx, sid, first, second)
			}},

		{Entry: catalogue.Entry{ID: "GET-PRIMED", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithPriming, SpecRef: catalogue.ResilienceProfile + "resumable-standalone-stream",
			Summary: "A standalone GET stream starts with a priming event (an id and empty data), so a client cut before the first message can resume it."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				e.Expect(e.WaitUntil(primingWait, func() bool { _, ok := firstEvent(get.Events()); return ok })).To(BeTrue(),
					"no event on the standalone GET stream within %v: without a priming event a client cut before the first message has no id to resume from "+
						"(a resilience expectation; the specification asks it of POST streams only)", primingWait)
				first, _ := firstEvent(get.Events())
				e.Expect(primes(first)).To(BeTrue(),
					"the GET stream's first event has id %q and data %q, not an id and empty data: a client cut before the first message has no id to resume from "+
						"(a resilience expectation; the specification asks it of POST streams only)", first.ID, first.Data)
			}},

		{Entry: catalogue.Entry{ID: "REDIRECT-ORPHANED", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "orphaned-notification-redirect", Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "Notifications of a request whose POST stream died arrive on the standalone GET stream, in order, none lost."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid, k, first, get := e.orphan(ctx)
				want := e.wantNotes()
				e.WaitUntil(toolRun(e.Config)+quiet(e.Config), func() bool { return e.countNotes(k, first, k.post, get) >= want })
				// A notification the server wrote to the POST connection before it
				// noticed the cut went to a dead socket; the client gets it back
				// by resuming that stream, at once (before the server's replay
				// window closes). Counted too, so only a notification that no
				// stream of the client can reach is a loss.
				streams := []*collector{first, k.post, get}
				resumeFailed := ""
				if e.countNotes(k, streams...) < want && k.post.LastID() != "" {
					if resumed, err := e.resumeAsClient(ctx, sid, k.post, "the POST stream resumed"); err == nil {
						e.WaitUntil(toolRun(e.Config), func() bool { _, ok := k.response(resumed.Messages()); return ok })
						streams = append(streams, resumed)
					} else {
						resumeFailed = fmt.Sprintf("; resuming the POST stream from %s failed: %v", k.post.LastID(), err)
					}
				}
				e.Pause(quiet(e.Config))
				// A target that cancels a call when its stream is cut
				// (DISCONNECT-NOT-CANCEL) has nothing left to redirect.
				e.OnPremise(catalogue.PremiseSurvivesCut, func() {
					e.expectRedirected(k, get, streams, func() string {
						why := "they were not redirected"
						if ended := e.endedEarly(k, streams...); ended != "" {
							why = ended
						}
						return "no notification of the call on the GET stream opened after the refresh: " + why + "; " + e.byStream(k, streams...) + resumeFailed
					})
					e.expectDeliveredSaying(k, resumeFailed, streams...)
				})
			}},

		{Entry: catalogue.Entry{ID: "REDIRECT-NO-RESPONSE", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "orphaned-notification-redirect", Needs: []catalogue.Key{catalogue.KeyNotifying}, ResumeRequired: true, DependsOn: []string{"EVT-REPLAY-POST"},
			Summary: "The response of such a request is not sent on the GET stream; resuming its POST stream yields it."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid, k, first, get := e.orphan(ctx)
				want := e.wantNotes()
				e.WaitUntil(2*toolRun(e.Config), func() bool { return e.countNotes(k, first, k.post, get) >= want })
				e.Pause(quiet(e.Config))
				for _, m := range get.Messages() {
					e.Expect(k.isResponse(m)).To(BeFalse(), "the orphaned request's response was sent on the standalone GET stream")
				}
				e.needIDs(k.post)
				resumed := e.resume(ctx, sid, k.post)
				e.awaitResponse(ctx, k, resumed)
			}},
	}
}

// orphan opens a standalone GET stream, starts the notifying tool, cuts
// every connection after its first notification on its POST stream (a
// page refresh) and opens a new standalone GET stream without
// Last-Event-ID, where the rest of its notifications should arrive. It
// returns the session, the call, and the first and the new GET streams.
func (e *env) orphan(ctx context.Context) (string, *call, *collector, *collector) {
	sid := e.connect(ctx, e.C)
	first := e.openGET(ctx, e.C, sid, "")
	k := e.startNotifying(ctx, e.C, sid, "orphan")
	e.awaitPostNotes(ctx, k, 1)
	e.refresh()
	get := e.openGET(ctx, e.C, sid, "")
	get.name = "the GET stream after the refresh"
	return sid, k, first, get
}
