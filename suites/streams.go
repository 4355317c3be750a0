package suites

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// primingWait bounds how long a new stream may take to send its priming event.
const primingWait = 2 * time.Second

// secondGETWait bounds how long SSE-RETRY-FIELD waits for the server to
// close a replaced GET stream.
const secondGETWait = 3 * minQuiet * 3

// streamChecks registers the streams checks.
func streamChecks() {
	check("GET-SSE-OR-405", nil, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		req, err := e.C.NewHTTPRequest(ctx, http.MethodGet, sid, nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := e.C.HTTP.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		if resp.StatusCode == http.StatusMethodNotAllowed {
			return
		}
		Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET with Accept: text/event-stream")
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		Expect(mt).To(Equal("text/event-stream"), "Content-Type of the GET stream")
	})

	check("GET-NO-RESPONSES", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		get := e.openGET(ctx, e.C, sid, "")
		k := e.startNotifying(ctx, e.C, sid, "get-no-responses")
		e.awaitResponse(ctx, k, k.post)
		e.expectWorks(ctx, e.C, sid)
		consistently(ctx, quiet(e.Config), func() []wire.Message { return responses(get.Messages()) }).
			Should(BeEmpty(), "JSON-RPC responses on the standalone GET stream")
	})

	check("MSG-ONE-STREAM", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		get := e.openGET(ctx, e.C, sid, "")
		e.SlowLink() // a fragmenting, late link must not change where messages go
		k := e.startNotifying(ctx, e.C, sid, "one-stream")
		e.awaitResponse(ctx, k, k.post)
		pause(ctx, quiet(e.Config)) // anything broadcast to the GET stream arrives meanwhile
		e.expectOnce(e.notes(k.post.Messages(), k), e.notes(get.Messages(), k))
		Expect(responses(get.Messages())).To(BeEmpty(), "the response also sent on the GET stream")
	})

	check("EVT-ID-UNIQUE", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		get := e.openGET(ctx, e.C, sid, "")
		a := e.startNotifying(ctx, e.C, sid, "unique-a")
		b := e.startNotifying(ctx, e.C, sid, "unique-b")
		e.awaitResponse(ctx, a, a.post)
		e.awaitResponse(ctx, b, b.post)
		ids := map[string]string{}
		for _, c := range []*collector{get, a.post, b.post} {
			for _, ev := range c.Events() {
				if ev.ID == "" {
					continue
				}
				Expect(ids).NotTo(HaveKey(ev.ID), "event id %q on %s was already used on %s", ev.ID, c.name, ids[ev.ID])
				ids[ev.ID] = c.name
			}
		}
		if len(ids) == 0 {
			Skip("the target sends no SSE event ids")
		}
	})

	check("EVT-REPLAY-STREAM", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		a := e.startNotifying(ctx, e.C, sid, "replay-a")
		b := e.startNotifying(ctx, e.C, sid, "replay-b")
		e.awaitPostNotes(ctx, a, 2)
		e.awaitPostNotes(ctx, b, 2)
		e.needIDs(a.post)
		e.Refresh()
		resumed := e.resume(ctx, sid, a.post.LastID())
		// Wait for a's response where the target replays it; its absence is
		// not this check's business, another stream's messages are.
		waitUntil(ctx, 2*toolRun(e.Config)+quiet(e.Config), func() bool { _, ok := a.response(resumed.Messages()); return ok })
		for _, m := range resumed.Messages() {
			Expect(b.isResponse(m) || (e.isNote(m, b) && !e.isNote(m, a))).To(BeFalse(),
				"resuming stream of %s (call A) replayed a message of call B's stream: %s %s", a.post.LastID(), m.Method, m.ID)
		}
	})

	check("EVT-REPLAY-POST", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		// The call's POST stream is the only stream open, so it is the one cut:
		// after its priming event and two more.
		e.CutAfter(3)
		k := e.startNotifying(ctx, e.C, sid, "replay-post")
		eventually(ctx, func() bool { _, done := k.response(k.post.Messages()); return done || k.post.Ended() }).
			Should(BeTrue(), "the POST stream cut after 3 events, or its response")
		if _, done := k.response(k.post.Messages()); done {
			Skip("the call's POST stream carried its response within 3 events, so it could not be cut before it: " + notesElsewhere)
		}
		e.needIDs(k.post)
		resumed := e.resume(ctx, sid, k.post.LastID())
		get := e.openGET(ctx, e.C, sid, "")
		e.awaitResponse(ctx, k, resumed)
		pause(ctx, quiet(e.Config))
		// Missed notifications come on the resumed stream, or on the standalone
		// stream where the server redirects a dead stream's notifications.
		e.expectOnce(e.notes(k.post.Messages(), k), e.notes(resumed.Messages(), k), e.notes(get.Messages(), k))
	})

	check("SSE-PRIMING", notifyBudget, func(ctx context.Context, e *Env) {
		if TestContext.ProtocolVersion < "2025-11-25" {
			Skip("priming events are new in protocol 2025-11-25; negotiated " + TestContext.ProtocolVersion)
		}
		sid := e.connect(ctx, e.C)
		k := e.startNotifying(ctx, e.C, sid, "priming")
		e.awaitResponse(ctx, k, k.post)
		first := k.post.Events()[0]
		Expect(first.HasID && first.ID != "" && strings.TrimSpace(first.Data) == "").To(BeTrue(),
			"the POST stream's first event must have an id and empty data; got id %q data %q", first.ID, first.Data)
		get := e.openGET(ctx, e.C, sid, "")
		Expect(waitUntil(ctx, primingWait, func() bool { return len(get.Events()) > 0 })).To(BeTrue(),
			"no event on the standalone GET stream within %v: a priming event should come at once", primingWait)
		first = get.Events()[0]
		Expect(first.HasID && first.ID != "" && strings.TrimSpace(first.Data) == "").To(BeTrue(),
			"the GET stream's first event must have an id and empty data; got id %q data %q", first.ID, first.Data)
	})

	check("SSE-RETRY-FIELD", nil, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		first := e.openGET(ctx, e.C, sid, "")
		second, err := e.C.OpenGET(ctx, sid, "")
		if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusConflict {
			Skip("the target refuses a second GET stream with 409, so it closes none on purpose here")
		}
		Expect(err).NotTo(HaveOccurred(), "second GET stream")
		collect("second GET", second)
		if !waitUntil(ctx, secondGETWait, first.Ended) {
			Skip("the target kept the first GET stream open after a second one; no server-initiated close to inspect")
		}
		retry := false
		for _, ev := range first.Events() {
			retry = retry || ev.HasRetry
		}
		Expect(retry).To(BeTrue(), "the server closed the first GET stream without sending a retry field first")
	})

	check("DISCONNECT-NOT-CANCEL", notifyBudget, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		k := e.startNotifying(ctx, e.C, sid, "not-cancel")
		e.awaitPostNotes(ctx, k, 1)
		e.needIDs(k.post)
		e.Reset()
		resumed := e.resume(ctx, sid, k.post.LastID())
		m := e.awaitResponse(ctx, k, resumed)
		Expect(m.Error).To(BeNil(), "the call ended with an error after its stream was dropped")
		_, err := wire.ResultText(m.Result)
		Expect(err).NotTo(HaveOccurred(), "the call's result after its stream was dropped")
	}, withReset())
}

// responses returns the JSON-RPC responses among msgs.
func responses(msgs []wire.Message) []wire.Message {
	var out []wire.Message
	for _, m := range msgs {
		if m.IsResponse() {
			out = append(out, m)
		}
	}
	return out
}

// awaitResponse waits until the call's response arrives on c.
func (e *Env) awaitResponse(ctx context.Context, k *call, c *collector) wire.Message {
	var m wire.Message
	eventually(ctx, func() bool {
		var ok bool
		m, ok = k.response(c.Messages())
		return ok
	}).Should(BeTrue(), "the response of %s on %s", k.token, c.name)
	return m
}

// awaitNotes waits until n of the call's notifications arrived on c.
func (e *Env) awaitNotes(ctx context.Context, k *call, c *collector, n int) {
	eventually(ctx, func() int { return len(e.notes(c.Messages(), k)) }).
		Should(BeNumerically(">=", n), "%d notifications of %s on %s", n, k.token, c.name)
}

// notesElsewhere explains why a check that cuts a call mid-stream cannot run.
const notesElsewhere = "the target does not send the notifying tool's notifications on the call's POST stream (for example, logging not related to the request goes to the standalone stream)"

// awaitPostNotes waits until n of the call's notifications arrived on its
// POST stream. A call that answers first sends them elsewhere: a check that
// needs to cut the call between notifications cannot run, and is skipped.
func (e *Env) awaitPostNotes(ctx context.Context, k *call, n int) {
	eventually(ctx, func() bool {
		_, done := k.response(k.post.Messages())
		return done || len(e.notes(k.post.Messages(), k)) >= n
	}).Should(BeTrue(), "%d notifications of %s, or its response, on its POST stream", n, k.token)
	if got := len(e.notes(k.post.Messages(), k)); got < n {
		Skip(fmt.Sprintf("the call answered with %d of its notifications on its POST stream: %s", got, notesElsewhere))
	}
}

// needIDs skips a resumption check when the stream carries no event ids.
func (e *Env) needIDs(c *collector) {
	if c.LastID() == "" {
		Skip("the target's SSE events carry no ids, so streams cannot be resumed")
	}
}

// resume opens GET with Last-Event-ID; a refusal skips the check as "not
// resumable" unless the check requires resumption.
func (e *Env) resume(ctx context.Context, sid, lastID string) *collector {
	s, err := e.get(ctx, e.C, sid, lastID)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status != http.StatusNotFound && e.Entry.Level != "RES" {
		Skip("the target does not resume streams: GET with Last-Event-ID got HTTP " + http.StatusText(se.Status))
	}
	Expect(err).NotTo(HaveOccurred(), "GET with Last-Event-ID %q", lastID)
	return collect("GET after "+lastID, s)
}
