package serverchecks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// primingWait bounds how long a new stream may take to send its priming event.
const primingWait = 2 * time.Second

// secondGETWait bounds how long SSE-RETRY-FIELD waits for the server to
// close a replaced GET stream.
const secondGETWait = 3 * minQuiet * 3

// streamChecks are the streams checks.
func streamChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "GET-SSE-OR-405", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecListening,
			Summary: "GET with Accept: text/event-stream and a valid session (none on a stateless target) gets text/event-stream or 405."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				req, err := e.C.NewHTTPRequest(ctx, http.MethodGet, sid, nil)
				e.Expect(err).NotTo(HaveOccurred())
				resp, err := e.C.HTTP.Do(req)
				e.Expect(err).NotTo(HaveOccurred())
				resp.Body.Close()
				if resp.StatusCode == http.StatusMethodNotAllowed {
					return
				}
				e.Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET with Accept: text/event-stream")
				mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
				e.Expect(mt).To(Equal(wire.MediaTypeSSE), "Content-Type of the GET stream")
			}},

		{Entry: catalogue.Entry{ID: "GET-NO-RESPONSES", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecListening,
			Summary: "The standalone GET stream never carries a JSON-RPC response."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				if e.Config.Has(catalogue.KeyNotifying) {
					k := e.startNotifying(ctx, e.C, sid, "get-no-responses")
					e.awaitResponse(ctx, k, k.post)
				} else {
					e.plainRequests(ctx, sid) // requests every server answers, with no tool to call
				}
				e.expectWorks(ctx, e.C, sid)
				e.Consistently(quiet(e.Config), func() []wire.Message { return e.ownResponses(get.Messages()) }).
					Should(BeEmpty(), "JSON-RPC responses on the standalone GET stream")
			}},

		{Entry: catalogue.Entry{ID: "GET-UNRELATED", Level: catalogue.Should, Section: "streams", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecListening, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "A notification of a request whose POST stream is connected does not appear on the standalone GET stream (a SHOULD in every revision from 2025-03-26 to 2025-11-25)."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				// Only a progress notification with the call's token provably
				// belongs to the call; other methods may be unrelated logging.
				if m := e.Config.Tools.Notifying.Method; m != "notifications/progress" {
					e.Skipf(report.Unobservable, "the profile counts %s, which names no request: which call a notification belongs to cannot be told", m)
				}
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				k := e.startNotifying(ctx, e.C, sid, "unrelated")
				e.awaitResponse(ctx, k, k.post)
				e.Pause(quiet(e.Config)) // anything sent to the GET stream arrives meanwhile
				e.expectOwnNotes(k, k.post, get)
				if on := e.notes(get.Messages(), k); len(on) > 0 {
					more := ""
					if n := e.Config.Tools.Notifying.Notifications; len(on) > n {
						// More than the call sends: the token is on other calls' progress too.
						more = fmt.Sprintf(" (more than the %d the call sends: the server puts its token on other calls' progress too, which PROGRESS-INCREASES grades)", n)
						on = append(on[:n:n], "…")
					}
					e.Failf("%d notifications with the call's token came on the standalone GET stream while the call's POST stream was connected (%d came on the POST stream)%s; the GET stream should carry only messages unrelated to running requests: %s",
						len(e.notes(get.Messages(), k)), len(e.notes(k.post.Messages(), k)), more, strings.Join(on, " "))
				}
			}},
		{Entry: catalogue.Entry{ID: "MSG-ONE-STREAM", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecMultiple, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "Each message goes to exactly one connected stream: no broadcast across GET and POST streams."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				e.slowLink() // a fragmenting, late link must not change where messages go
				k := e.startNotifying(ctx, e.C, sid, "one-stream")
				e.awaitResponse(ctx, k, k.post)
				e.Pause(quiet(e.Config)) // anything broadcast to the GET stream arrives meanwhile
				get.name = "the standalone GET stream"
				// Judged on the call's own notifications, where they went:
				// how many arrived is TOOL-AS-DECLARED's and the redirect
				// checks', and other calls' are not this check's to count.
				e.expectOwnNotes(k, k.post, get)
				e.expectNoneTwice(k, k.post, get)
				e.Expect(e.ownResponses(get.Messages())).To(BeEmpty(), "the response also sent on the GET stream")
			}},
		{Entry: catalogue.Entry{ID: "MSG-RELATED-STREAM", Level: catalogue.Should, Levels: map[string]catalogue.Level{wire.SessionlessProtocolVersion: catalogue.Must}, Section: "streams", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecSending, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "A POST stream carries only its own request's progress notifications, not those of another call running in the session (or, on a stateless target and in 2026-07-28, at the same time) (\"These messages SHOULD relate to the originating client request.\"; 2026-07-28: \"These notifications MUST relate to the originating client request.\", graded there as a MUST)."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.relatedStreams(ctx) }},

		{Entry: catalogue.Entry{ID: "PROGRESS-INCREASES", Level: catalogue.Must, Section: "streams", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecProgress, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "With two calls running at once in one session, the progress values under each call's token increase on each stream that carries them, none twice (\"The progress value MUST increase with each notification, even if the total is unknown\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.progressIncreases(ctx) }},

		{Entry: catalogue.Entry{ID: "MSG-SESSION-ISOLATED", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecMultiple, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "Each session's messages stay on its own streams: with two sessions' GET streams open and a call running in each at once, no stream of one carries a notification or a response of another (\"The server MUST send each of its JSON-RPC messages on only one of the connected streams; that is, it MUST NOT broadcast the same message across multiple streams\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.sessionsIsolated(ctx) }},

		{Entry: catalogue.Entry{ID: "EVT-ID-UNIQUE", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecResumability,
			Summary: "SSE event ids are unique across all streams of the session, the standalone GET stream and four POST streams opened at the same instant included (\"If present, the ID MUST be globally unique across all streams within that session\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				streams := map[string][]sse.Event{}
				if e.Config.Has(catalogue.KeyNotifying) {
					// Started at once: ids handed out by a read and a later
					// write collide only for streams that open together.
					// Four, not two: a server whose ids collide only when
					// two streams open within the same tick of its clock
					// is caught every run, not every other one.
					calls := e.startTogether(ctx, e.C, sid, "unique-a", "unique-b", "unique-c", "unique-d")
					for i, k := range calls {
						k.post.name = fmt.Sprintf("call %c's POST stream", 'A'+i)
					}
					for _, k := range calls {
						e.awaitResponse(ctx, k, k.post)
						streams[k.post.name] = k.post.Events()
					}
				} else {
					// With no tool to call, the POST streams (if any) of two
					// requests every server answers.
					for _, resp := range e.plainRequests(ctx, sid) {
						streams["POST "+resp.method] = resp.Events
					}
				}
				streams[get.name] = get.Events()
				ids := map[string]string{}
				for _, name := range slices.Sorted(maps.Keys(streams)) {
					for _, ev := range streams[name] {
						if ev.ID == "" {
							continue
						}
						e.Expect(ids).NotTo(HaveKey(ev.ID), "event id %q on %s was already used on %s", ev.ID, name, ids[ev.ID])
						ids[ev.ID] = name
					}
				}
				if len(ids) == 0 {
					e.Skipf(report.NotOffered, "no event on the streams this check held carried an id (%s)", strings.Join(slices.Sorted(maps.Keys(streams)), ", "))
				}
			}},

		{Entry: catalogue.Entry{ID: "EVT-REPLAY-STREAM", Level: catalogue.Must, Section: "streams", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecResumability, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "GET with Last-Event-ID replays only messages of the stream that id belongs to: a resumed POST stream carries nothing of another call's, and, where only the standalone GET stream carries ids, its resume carries nothing that was sent on a call's own POST stream (\"The server MUST NOT replay messages that would have been delivered on a different stream.\")."},
			need: func(c *target.Profile) time.Duration { return 2 * notifyNeed(c) }, body: func(ctx context.Context, e *env) { e.replayOwnStream(ctx) }},

		{Entry: catalogue.Entry{ID: "EVT-REPLAY-POST", Level: catalogue.May, Section: "streams", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecResumability, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "A POST stream cut before its response resumes by GET with Last-Event-ID: missed notifications, then the response."},
			need: func(c *target.Profile) time.Duration { return 2 * notifyNeed(c) }, body: func(ctx context.Context, e *env) {
				// A client that holds no standalone GET stream and resumes the
				// stream that broke, as the specification describes: once at
				// once, before the server may have noticed the cut, and once a
				// notification interval later, when it has. A session each.
				every := e.Config.Tools.Notifying.Interval.D()
				e.replayPOST(ctx, "replay-post-at-once", 0)
				e.replayPOST(ctx, "replay-post-noticed", every+every/2)
			}},

		{Entry: catalogue.Entry{ID: "SSE-PRIMING", Level: catalogue.Should, Section: "streams", Revisions: catalogue.WithPriming, Stateless: true, SpecRef: catalogue.SpecSending,
			Summary: "An SSE stream that a POST opens starts with an event that has an id and empty data (new in 2025-11-25)."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				if e.Config.Has(catalogue.KeyNotifying) {
					k := e.startNotifying(ctx, e.C, sid, "priming")
					e.awaitResponse(ctx, k, k.post)
					first, _ := firstEvent(k.post.Events())
					e.Expect(primes(first)).To(BeTrue(),
						"the POST stream's first event must have an id and empty data; got id %q data %q", first.ID, first.Data)
				} else {
					// With no tool to call, the POST streams of requests every
					// server answers; one answered with JSON has none to judge.
					judged := 0
					for _, resp := range e.plainRequests(ctx, sid) {
						if first, ok := firstEvent(resp.Events); resp.IsSSE && ok {
							e.Expect(primes(first)).To(BeTrue(),
								"the POST stream's first event (%s) must have an id and empty data; got id %q data %q", resp.method, first.ID, first.Data)
							judged++
						}
					}
					if judged == 0 {
						// No evidence, no pass.
						e.Skip(report.NotOffered, "the target answered every request with JSON, opening no SSE stream to judge; declare tools.notifying for a call it streams")
					}
				}
				// The SHOULD sits under "Sending Messages to the Server": it is
				// about the streams a POST opens. The standalone GET stream's
				// priming is GET-PRIMED, a resilience expectation.
			}},

		{Entry: catalogue.Entry{ID: "SSE-RETRY-FIELD", Level: catalogue.Should, Section: "streams", Revisions: catalogue.WithPriming, SpecRef: catalogue.SpecSending,
			Summary: "A server that closes an SSE connection on purpose sends a retry field first (new in 2025-11-25)."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				first := e.openGET(ctx, e.C, sid, "")
				second, err := e.C.OpenGET(ctx, sid, "")
				if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusConflict {
					e.Skip(report.NotOffered, "the target refuses a second GET stream with 409, so it closes none on purpose here")
				}
				e.Expect(err).NotTo(HaveOccurred(), "second GET stream")
				e.collect("second GET", second)
				if !e.WaitUntil(secondGETWait, first.Ended) {
					e.Skip(report.Unobservable, "the target kept the first GET stream open after a second one; no server-initiated close to inspect")
				}
				retry := false
				for _, ev := range first.Events() {
					retry = retry || ev.HasRetry
				}
				e.Expect(retry).To(BeTrue(), "the server closed the first GET stream without sending a retry field first")
			}},

		{Entry: catalogue.Entry{ID: "DISCONNECT-NOT-CANCEL", Level: catalogue.Should, Section: "streams", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecCancellation, Needs: []catalogue.Key{catalogue.KeyNotifying}, DependsOn: []string{"EVT-REPLAY-POST"},
			Summary: "Dropping a POST stream does not cancel the request: it completes and its result is reachable by resumption."},
			need: notifyNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				k := e.startNotifying(ctx, e.C, sid, "not-cancel")
				e.awaitPostNotes(ctx, k, 1)
				e.needIDs(k.post)
				e.reset()
				m := e.resumedResponse(ctx, sid, k)
				if b := e.baseline(); m.Error != nil && b.erred() {
					e.Inconclusivef("the call ended with %v after its stream was dropped; but %s, so the error cannot be blamed on the drop", m.Error, b.Shortfall())
				}
				if failed := callFailed(m); failed != "" {
					e.Failf("the call ended with %s after its stream was dropped: dropping a stream must not cancel its request", failed)
				}
				_, err := wire.ResultText(m.Result)
				e.Expect(err).NotTo(HaveOccurred(), "the call's result after its stream was dropped")
			}, reset: true},
	}
}

// replayPOST calls the notifying tool in a new session, has its POST stream cut after its
// priming event and two more (it is the only stream open), waits wait,
// and resumes it: the missed notifications, each once and in order, then
// the response, must come on the resumed stream.
func (e *env) replayPOST(ctx context.Context, token string, wait time.Duration) {
	e.Helper()
	sid := e.connect(ctx, e.C)
	e.cutAfter(3)
	k := e.startNotifying(ctx, e.C, sid, token)
	e.await(e.noResponse(), func() bool { _, done := k.response(k.post.Messages()); return done || k.post.Ended() },
		"the POST stream of %s cut after 3 events, or its response", token)
	if _, done := k.response(k.post.Messages()); done {
		e.Skip(report.Unobservable, "the call's POST stream carried its response within 3 events, so it could not be cut before it: "+notesElsewhere)
	}
	e.needIDs(k.post)
	when := "at once"
	if wait > 0 {
		when = fmt.Sprintf("%v after the cut (the server has noticed it)", wait)
		e.Logf("no stream for %v: the server notices the cut", wait)
		e.Pause(wait)
	}
	resumed := e.resume(ctx, sid, k.post)
	resumed.name = "the POST stream resumed " + when
	e.awaitResponse(ctx, k, resumed)
	e.Pause(quiet(e.Config)) // a notification sent after the response arrives meanwhile
	e.expectDelivered(k, k.post, resumed)
	msgs := resumed.Messages()
	for i, m := range msgs {
		if k.isResponse(m) && len(e.notes(msgs[i+1:], k)) > 0 {
			e.Failf("%s carried notifications after the call's response", resumed.name)
		}
	}
}

// plainResponse is the answer to one of plainRequests.
type plainResponse struct {
	*wire.Response
	method string
}

// plainRequests sends ping and tools/list on session sid, requests every
// server answers and that change nothing, and expects each answered:
// what the checks that can run with no declared tool send instead of
// calling one.
func (e *env) plainRequests(ctx context.Context, sid string) []plainResponse {
	var out []plainResponse
	for _, method := range []string{"ping", "tools/list"} {
		resp, err := e.C.Call(ctx, sid, method, nil)
		e.Expect(err).NotTo(HaveOccurred(), method)
		e.Expect(resp.Status).To(Equal(http.StatusOK), "%s %s: %s", method, onSession(sid), resp.Body)
		out = append(out, plainResponse{resp, method})
	}
	return out
}
