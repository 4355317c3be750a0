package serverchecks

import (
	"context"
	"errors"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// laterMessagesOnNew is GET-LIVE-REPLACED's second half: after second
// replaced first, the session's later messages go to second. A message
// for the standalone stream is what the client cannot ask for directly;
// the notifications of a call whose POST stream the check cuts go there
// on a server that redirects them (REDIRECT-ORPHANED). So a control
// session, with one GET stream, has a call cut at the same time: where
// the control's notifications reach its GET stream and the replaced
// session's reach neither, they went to the stream that was replaced.
func (e *env) laterMessagesOnNew(ctx context.Context, sid string, first, second *collector) {
	if !e.Config.Has(catalogue.KeyNotifying) {
		e.Skip(report.Unobservable, "the first GET stream was closed once a second replaced it, but where later messages go cannot be seen without a tool that sends some: declare tools.notifying")
	}
	control := e.connect(ctx, e.C)
	controlGET := e.openGET(ctx, e.C, control, "")
	controlGET.name = "the control session's GET stream"
	body, k := e.notifyingRequest(e.C, "replaced")
	s, err := e.openCall(ctx, e.C, sid, body)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status >= 400 && se.Status < 500 {
		// The session itself is what broke (RESUME-NO-INIT's defect), not
		// where its messages go.
		e.Skipf(report.Unobservable, "the first GET stream was closed once a second replaced it, but then the session refused a call (HTTP %d %s), so where later messages go cannot be seen (RESUME-NO-INIT grades a session that a new GET stream resets)",
			se.Status, quoted(se.Body, 200))
	}
	k = e.started(k, s, err)
	kc := e.startNotifying(ctx, e.C, control, "replaced-control")
	k.post.name, kc.post.name = "the call's POST stream", "the control call's POST stream"
	e.awaitPostNotes(ctx, k, 1, second)
	e.awaitPostNotes(ctx, kc, 1, controlGET)
	e.Logf("!! cutting both calls' POST streams after their first notification")
	k.post.Close()
	kc.post.Close()
	e.WaitUntil(toolRun(e.Config)+quiet(e.Config), func() bool {
		return len(e.notes(second.Messages(), k)) > 0 && len(e.notes(controlGET.Messages(), kc)) > 0
	})
	switch {
	case len(e.notes(second.Messages(), k)) > 0:
		e.Expect(e.notes(first.Messages(), k)).To(BeEmpty(), "a later notification on the replaced GET stream")
		e.Logf("the cut call's later notifications came on the new GET stream: %s", e.byStream(k, first, second))
	case len(e.notes(controlGET.Messages(), kc)) > 0:
		e.Failf("after a second GET stream replaced the first, a cut call's later notifications reached neither (%s), while a session with one GET stream got its cut call's on it (%s): later messages must go to the new stream",
			e.byStream(k, k.post, first, second), e.byStream(kc, kc.post, controlGET))
	default:
		e.Skipf(report.Unobservable, "the first GET stream was closed once a second replaced it, but where later messages go cannot be seen: a cut call's notifications reached no GET stream even in a session with one (%s): the target redirects none, or cancels the call (REDIRECT-ORPHANED and DISCONNECT-NOT-CANCEL grade those)",
			e.byStream(kc, kc.post, controlGET))
	}
}
