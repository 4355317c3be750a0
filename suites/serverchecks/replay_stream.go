package serverchecks

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// replayOwnStream is EVT-REPLAY-STREAM: a resumed stream replays only
// what was sent on that stream. It resumes a call's POST stream, with a
// second call running beside it; a target whose POST streams carry no
// ids is judged on its standalone GET stream instead, which may carry
// them when the POST streams do not.
func (e *env) replayOwnStream(ctx context.Context) {
	sid := e.connect(ctx, e.C)
	a := e.startNotifying(ctx, e.C, sid, "replay-a")
	b := e.startNotifying(ctx, e.C, sid, "replay-b")
	a.post.name = "call A's POST stream (replay-a)"
	b.post.name = "call B's POST stream (replay-b)"
	e.awaitPostNotes(ctx, a, 2, b.post)
	e.awaitPostNotes(ctx, b, 2, a.post)
	if a.post.LastID() == "" {
		e.Logf("%s carries no event ids: the standalone GET stream is resumed instead", a.post.name)
		e.replayStandalone(ctx)
		return
	}
	e.refresh()
	resumed := e.resume(ctx, sid, a.post)
	// Wait for a's response where the target replays it; its absence is
	// not this check's business, another stream's messages are.
	e.WaitUntil(2*toolRun(e.Config)+quiet(e.Config), func() bool { _, ok := a.response(resumed.Messages()); return ok })
	for _, m := range resumed.Messages() {
		e.Expect(b.isResponse(m) || (e.isNote(m, b) && !e.isNote(m, a))).To(BeFalse(),
			"resuming stream of %s (call A) replayed a message of call B's stream: %s %s", a.post.LastID(), m.Method, m.ID)
	}
}

// replayStandalone resumes the standalone GET stream of a new session
// after a call ran on its own POST stream: none of that call's messages
// was sent on the GET stream, so none may come back on its resume. The
// GET stream needs an event id to resume from: its priming event, or the
// notifications of a call whose POST stream the check cut, which a
// server sends there once it has noticed.
func (e *env) replayStandalone(ctx context.Context) {
	sid := e.connect(ctx, e.C)
	get := e.openGET(ctx, e.C, sid, "")
	if get.LastID() == "" {
		c := e.startNotifying(ctx, e.C, sid, "replay-cut")
		c.post.name = "call C's POST stream (replay-cut)"
		e.awaitPostNotes(ctx, c, 1, get)
		e.Logf("!! cutting %s after its first notification", c.post.name)
		c.post.Close()
		e.WaitUntil(toolRun(e.Config)+quiet(e.Config), func() bool { return get.LastID() != "" })
		if get.LastID() == "" {
			e.Skipf(report.NotOffered, "no event carries an id: not call A's POST stream, and not the standalone GET stream (%d events), also after call C's POST stream was cut", len(get.Events()))
		}
	}
	b := e.startNotifying(ctx, e.C, sid, "replay-b")
	b.post.name = "call B's POST stream (replay-b)"
	e.awaitResponse(ctx, b, b.post)
	// B's messages that came on the GET stream were sent there: a resume
	// may replay those. The ones sent on B's own stream only it may not.
	onGET := map[string]bool{}
	for _, n := range e.notes(get.Messages(), b) {
		onGET[n] = true
	}
	get.Close()
	e.Logf("!! cut the standalone GET stream after event %q", get.LastID())
	resumed := e.resume(ctx, sid, get)
	resumed.name = fmt.Sprintf("the GET stream resumed after %q", get.LastID())
	foreign := func() []string {
		var out []string
		for _, m := range resumed.Messages() {
			switch {
			case b.isResponse(m):
				out = append(out, "call B's response")
			case e.isNote(m, b) && !onGET[string(m.Params)]:
				out = append(out, "call B's notification "+quoted(string(m.Params), 200))
			}
		}
		return out
	}
	e.WaitUntil(quiet(e.Config), func() bool { return len(foreign()) > 0 })
	if got := foreign(); len(got) > 0 {
		e.Failf("%s replayed %d messages that were sent on %s, not on the GET stream, among them %s (only the stream the id belongs to may be replayed)",
			resumed.name, len(got), b.post.name, strings.Join(got[:min(len(got), 3)], ", "))
	}
	e.Logf("%s carried %d messages, none of call B's own stream", resumed.name, len(resumed.Messages()))
}
