package serverchecks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// call is a tools/call of the profile's notifying tool on its own POST stream.
type call struct {
	token string
	id    string // the request's JSON-RPC id as JSON text
	post  *collector
}

// startNotifying calls the notifying tool with a progress token and returns
// while its POST stream is open.
func (e *env) startNotifying(ctx context.Context, c *wire.Client, sid, name string) *call {
	body, k := e.notifyingRequest(c, name)
	s, err := e.openCall(ctx, c, sid, body)
	return e.started(k, s, err)
}

// openCall posts a request on session sid, or, in the sessionless
// revision, as that revision sends a request (its _meta and headers).
func (e *env) openCall(ctx context.Context, c *wire.Client, sid string, body map[string]any) (*wire.Stream, error) {
	if !e.modern() {
		return c.OpenPOST(ctx, sid, body)
	}
	params, _ := body["params"].(map[string]any)
	req, err := c.NewModernRequestID(ctx, body["id"], body["method"].(string), params, nil)
	if err != nil {
		return nil, err
	}
	return c.Open(req)
}

// startTogether starts a call of the notifying tool for each of names at
// the same instant (atOnce). The calls are returned in the order of names.
func (e *env) startTogether(ctx context.Context, c *wire.Client, sid string, names ...string) []*call {
	type opened struct {
		s   *wire.Stream
		err error
	}
	calls := make([]*call, len(names))
	bodies := make([]map[string]any, len(names))
	for i, name := range names {
		bodies[i], calls[i] = e.notifyingRequest(c, name)
	}
	got := make([]opened, len(names))
	e.Logf("starting %d calls of %s at once", len(names), e.Config.Tools.Notifying.Name)
	atOnce(len(names), func(i int) { got[i].s, got[i].err = e.openCall(ctx, c, sid, bodies[i]) })
	for i := range names {
		calls[i] = e.started(calls[i], got[i].s, got[i].err)
	}
	return calls
}

// notifyingRequest is a tools/call of the notifying tool with a progress
// token named name, unique in the run, and the call it starts.
func (e *env) notifyingRequest(c *wire.Client, name string) (map[string]any, *call) {
	t := e.Config.Tools.Notifying
	token := uniqueToken(name)
	e.tokens[token] = true
	body := c.Request("tools/call", wire.ToolParams(t.Name, t.Arguments, token))
	id, _ := json.Marshal(body["id"])
	return body, &call{token: token, id: string(id)}
}

// started judges the opening of call k's POST stream and collects it.
func (e *env) started(k *call, s *wire.Stream, err error) *call {
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusOK {
		e.Skip(report.NotOffered, "the target answered tools/call with a JSON body, not an SSE stream; this check needs the response streamed")
	}
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", e.Config.Tools.Notifying.Name)
	k.post = e.collect("POST "+e.Config.Tools.Notifying.Name, s)
	return k
}

// expectNoneTwice expects no notification of call k on two of streams:
// a message sent on one stream only.
func (e *env) expectNoneTwice(k *call, streams ...*collector) {
	e.Helper()
	seen := map[string]string{}
	for _, c := range streams {
		for _, n := range e.notes(c.Messages(), k) {
			if on, dup := seen[n]; dup && on != c.name {
				e.Failf("notification delivered on two streams (%s and %s): %s; %s", on, c.name, n, e.byStream(k, streams...))
			}
			seen[n] = c.name
		}
	}
}

// uniqueToken is a progress token named name and unique in the run, so
// that a notification is attributed to its own call only: a server that
// mixes tokens between calls, or sends one session's notifications to
// another, shows a token that is no call's of the check, never one it
// counts as its own (two runs of a check, at two revisions, included).
func uniqueToken(name string) string { return name + "-" + newKey()[:10] }

// expectOwnNotes is the evidence a check that judges where a call's
// notifications went needs: some of them, with the call's own progress
// token, on one of streams. When none came, a verdict would rest on an
// absence: the check cannot tell where they went, and skips saying what
// it saw instead (notifications of other tokens: a server that mixes
// tokens between calls, which MSG-RELATED-STREAM grades, or sends other
// sessions' notifications, which MSG-SESSION-ISOLATED grades).
func (e *env) expectOwnNotes(k *call, streams ...*collector) {
	e.Helper()
	foreign := map[string]int{}
	for _, c := range streams {
		if len(e.notes(c.Messages(), k)) > 0 {
			return
		}
		for _, m := range c.Messages() {
			if tok, ok := progressTokenOf(m); ok {
				foreign[tok]++
			}
		}
	}
	seen := "no progress notifications at all"
	if len(foreign) > 0 {
		var parts []string
		for i, tok := range slices.Sorted(maps.Keys(foreign)) {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d other tokens", len(foreign)-i))
				break
			}
			parts = append(parts, fmt.Sprintf("%d with token %q", foreign[tok], tok))
		}
		seen = strings.Join(parts, ", ")
	}
	for tok := range foreign {
		if !e.tokens[tok] {
			// Another check's call: the target sent its notifications to
			// this check's session, and this check's, maybe, to another.
			e.Skipf(report.Interfered, "none of the call's notifications carried its progress token %q, and its streams carried other checks' (%s): the target sends one session's notifications to another session's streams (MSG-SESSION-ISOLATED grades that)", k.token, seen)
		}
	}
	e.Skipf(report.Unobservable, "none of the call's notifications carried its progress token %q, so where they went cannot be told; its streams carried %s", k.token, seen)
}

// isNote reports whether m is one of the call's counted notifications.
func (e *env) isNote(m wire.Message, k *call) bool {
	method := e.Config.Tools.Notifying.Method
	if m.Method != method {
		return false
	}
	if method != "notifications/progress" {
		return true
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return fmt.Sprint(p.Token) == k.token
}

// notes returns the params of the call's notifications among msgs.
func (e *env) notes(msgs []wire.Message, k *call) []string {
	var out []string
	for _, m := range msgs {
		if e.isNote(m, k) {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// isResponse reports whether m is the call's response.
func (k *call) isResponse(m wire.Message) bool {
	return m.IsResponse() && string(m.ID) == k.id
}

// response returns the call's response among msgs, if any.
func (k *call) response(msgs []wire.Message) (wire.Message, bool) {
	for _, m := range msgs {
		if k.isResponse(m) {
			return m, true
		}
	}
	return wire.Message{}, false
}

// endedEarly says how the call ended when its response, among streams, is
// an error that came before all of its notifications: nothing more of it
// can come. It is "" otherwise.
func (e *env) endedEarly(k *call, streams ...*collector) string {
	want := e.Config.Tools.Notifying.Notifications
	for _, c := range streams {
		if m, ok := k.response(c.Messages()); ok && m.Error != nil {
			if got := e.countNotes(k, streams...); got < want {
				return fmt.Sprintf("the call ended with %v (on %s) after %d of its %d notifications, so no more can come (a server that cancels a request when its stream drops fails DISCONNECT-NOT-CANCEL too)",
					m.Error, c.name, got, want)
			}
		}
	}
	return ""
}

// expectDelivered checks that the streams a client holds or held carry,
// between them, every notification of the call exactly once, each stream
// in order; where they went is the server's choice. A failure lists which
// notification came on which stream.
func (e *env) expectDelivered(k *call, streams ...*collector) {
	e.Helper()
	e.expectDeliveredSaying(k, "", streams...)
}

// expectDeliveredSaying is expectDelivered with why to add to a failure.
func (e *env) expectDeliveredSaying(k *call, why string, streams ...*collector) {
	e.Helper()
	notes := make([][]string, len(streams))
	for i, c := range streams {
		notes[i] = e.notes(c.Messages(), k)
	}
	byStream := "; " + e.byStream(k, streams...) + why
	seen := map[string]string{}
	total := 0
	for i, c := range streams {
		last := -1.0
		for _, n := range notes[i] {
			if on, dup := seen[n]; dup {
				fail := func() { e.Failf("notification delivered twice (on %s and %s): %s%s", on, c.name, n, byStream) }
				if on == c.name {
					// Twice on one stream: sent twice, which
					// PROGRESS-INCREASES grades, unless it passed.
					e.OnPremise(catalogue.PremiseProgress, fail)
				}
				fail()
			}
			seen[n] = c.name
			if p, ok := progressOf(n); ok {
				if p <= last {
					e.OnPremise(catalogue.PremiseProgress, func() { e.Failf("notifications out of order on %s%s", c.name, byStream) })
				}
				last = p
			}
		}
		total += len(notes[i])
	}
	if want := e.Config.Tools.Notifying.Notifications; total != want {
		ended := e.endedEarly(k, streams...)
		// An error that ended this call early is the fault's doing, unless
		// the undisturbed call ended with one too.
		if (ended == "" || e.baseline().erred()) && e.explainedCount(total, byStream) {
			return
		}
		if ended != "" {
			byStream = "; " + ended + byStream
		}
		e.Failf("every notification of the call exactly once: got %d of %d%s", total, want, byStream)
	}
}

// byStream says which of the call's notifications each stream carried.
func (e *env) byStream(k *call, streams ...*collector) string {
	var where []string
	for _, c := range streams {
		where = append(where, fmt.Sprintf("%s: %s", c.name, progressList(e.notes(c.Messages(), k))))
	}
	return "by stream: " + strings.Join(where, "; ")
}

// countNotes is how many of the call's notifications the streams carry.
func (e *env) countNotes(k *call, streams ...*collector) int {
	n := 0
	for _, c := range streams {
		n += len(e.notes(c.Messages(), k))
	}
	return n
}

// progressOf is a progress notification's progress value.
func progressOf(params string) (float64, bool) {
	var p struct{ Progress *float64 }
	if json.Unmarshal([]byte(params), &p) != nil || p.Progress == nil {
		return 0, false
	}
	return *p.Progress, true
}

// progressList renders notifications by their progress values ("1 2 5"),
// or counts them when they carry none.
func progressList(notes []string) string {
	if len(notes) == 0 {
		return "none"
	}
	var out []string
	for _, n := range notes {
		if p, ok := progressOf(n); ok {
			out = append(out, strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	if len(out) < len(notes) {
		return fmt.Sprintf("%d notifications", len(notes))
	}
	return strings.Join(out, " ")
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

// awaitResponse waits until the call's response arrives on c, at most
// callWait: what the undisturbed call showed the target needs, and no
// longer than c stays open. When that call got no response either, a
// wait in vain is inconclusive.
func (e *env) awaitResponse(ctx context.Context, k *call, c *collector) wire.Message {
	var m wire.Message
	ok := false
	e.await(e.noResponse(), func() bool {
		ended := c.Ended() // read first: once ended, every event is in
		m, ok = k.response(c.Messages())
		return ok || ended
	}, "the response of %s on %s", k.token, c.name)
	if !ok {
		if short := e.noResponse(); short != "" {
			e.Inconclusivef("%s ended without the response of %s; but %s", c.name, k.token, short)
		}
		e.Failf("%s ended without the response of %s", c.name, k.token)
	}
	return m
}

// awaitRecovered waits, until the check's deadline, for the response of
// a call that the target must first recover (its replica was killed):
// the undisturbed call's duration does not bound that.
func (e *env) awaitRecovered(k *call, c *collector) wire.Message {
	var m wire.Message
	e.Eventually(func() bool {
		var ok bool
		m, ok = k.response(c.Messages())
		return ok
	}).Should(BeTrue(), "the response of %s on %s", k.token, c.name)
	return m
}

// notesElsewhere explains why a check that cuts a call mid-stream cannot run.
const notesElsewhere = "the target does not send the notifying tool's notifications on the call's POST stream (for example, logging not related to the request goes to the standalone stream)"

// awaitPostNotes waits until n of the call's notifications arrived on its
// POST stream. A call that answers first sends them elsewhere: a check that
// needs to cut the call between notifications cannot run, and is skipped,
// saying which of others (the other streams the check holds) had them.
func (e *env) awaitPostNotes(ctx context.Context, k *call, n int, others ...*collector) {
	e.await(e.noResponse(), func() bool {
		_, done := k.response(k.post.Messages())
		return done || len(e.notes(k.post.Messages(), k)) >= n
	}, "%d notifications of %s, or its response, on its POST stream", n, k.token)
	if got := len(e.notes(k.post.Messages(), k)); got < n {
		e.Skip(report.Unobservable, fmt.Sprintf("the call answered with %d of its notifications on its POST stream: %s", got, e.notesSeen(k, others)))
	}
}

// notesSeen says where the call's notifications went, among others, when
// they did not come on its POST stream. Only a progress token tells whose
// a notification is; for other methods it says what notesElsewhere does.
func (e *env) notesSeen(k *call, others []*collector) string {
	if len(others) == 0 || e.Config.Tools.Notifying.Method != "notifications/progress" {
		return notesElsewhere
	}
	var on []string
	for _, c := range others {
		if got := len(e.notes(c.Messages(), k)); got > 0 {
			on = append(on, fmt.Sprintf("%d came on %s", got, c.name))
		}
	}
	if len(on) == 0 {
		return notesElsewhere + "; none came on " + heldStreams(others) + " either"
	}
	return "the target sent them elsewhere: " + strings.Join(on, ", ") + " (" + e.byStream(k, append([]*collector{k.post}, others...)...) + ")"
}

// needIDs skips a resumption check when the stream carries no event ids.
func (e *env) needIDs(c *collector) {
	if c.LastID() == "" {
		// Said of the stream seen, not of the target: another of its
		// streams (the standalone one) may carry ids.
		e.Skipf(report.NotOffered, "the events of %s carry no ids, so it cannot be resumed", c.name)
	}
}

// resume opens GET with Last-Event-ID after the last event of from; a
// refusal skips the check as "not resumable" unless the check requires
// resumption. A refusal that came later than the declared event_max_age
// after that event is the harness's lateness, not the target's fault.
func (e *env) resume(ctx context.Context, sid string, from *collector) *collector {
	lastID := from.LastID()
	s, err := e.get(ctx, e.C, sid, lastID)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status != http.StatusNotFound {
		if age, late := from.sinceLastID(), e.Config.Timings.EventMaxAge.D(); late > 0 && age > late {
			e.Skip(report.Unobservable, fmt.Sprintf("inconclusive: the harness resumed %v after event %q, later than the declared event_max_age %v (a busy machine); the target answered HTTP %d",
				age.Round(time.Millisecond), lastID, late, se.Status))
		}
		if !e.Entry.ResumeRequired {
			e.Skip(report.NotOffered, "the target does not resume streams: GET with Last-Event-ID got HTTP "+http.StatusText(se.Status))
		}
	}
	e.Expect(err).NotTo(HaveOccurred(), "GET with Last-Event-ID %q", lastID)
	return e.collect("GET after "+lastID, s)
}

// resumeAsClient resumes from's stream as a client back from a refresh
// does, collecting it as name. A resume that fails is no verdict here: it
// is logged, and the caller counts the streams it has.
func (e *env) resumeAsClient(ctx context.Context, sid string, from *collector, name string) (*collector, error) {
	s, err := e.get(ctx, e.C, sid, from.LastID())
	if err != nil {
		e.Logf("resuming %s from %s failed (%v): it does not count", from.name, from.LastID(), err)
		return nil, err
	}
	return e.collect(name, s), nil
}
