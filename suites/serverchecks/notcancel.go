package serverchecks

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// resumedResponse resumes the call's dropped POST stream and returns the
// call's response from it. A resume that does not carry the response is
// not yet a cancellation: a replay store can lose on one resume what a
// second one from the same Last-Event-ID still has, so it resumes once
// more before concluding. When neither carries it, the check fails,
// saying whether the call's notifications went on after the drop (it was
// not cancelled; its result is lost to replay) or stopped.
func (e *env) resumedResponse(ctx context.Context, sid string, k *call) wire.Message {
	lastID := k.post.LastID()
	first := e.resume(ctx, sid, k.post)
	first.name = "the POST stream resumed from " + lastID
	if m, ok := e.responseOn(k, first); ok {
		return m
	}
	why := fmt.Sprintf("no response on %s within %v", first.name, e.callWait().Round(time.Millisecond))
	if first.Ended() {
		why = first.name + " ended without the response"
	}
	e.Logf("%s: resuming again from %s before concluding anything", why, lastID)
	first.Close()
	again := e.resume(ctx, sid, k.post)
	again.name = "the POST stream resumed again from " + lastID
	if m, ok := e.responseOn(k, again); ok {
		e.Logf("the first resume from %s lost the call's response and the second carried it: the call was not cancelled (replay itself is graded by EVT-REPLAY-POST and REPLAY-GAP)", lastID)
		return m
	}
	streams := []*collector{k.post, first, again}
	if short := e.noResponse(); short != "" {
		e.Inconclusivef("the call's response came on neither of two resumes from %s; but %s (%s)", lastID, short, e.byStream(k, streams...))
	}
	got, want := e.distinctNotes(k, streams...), e.wantNotes()
	if got >= want {
		e.Failf("the call ran on after its stream was dropped (%d of its %d notifications came), but its response came on neither of two resumes from %s: "+
			"it was not cancelled, but its result is not reachable by resumption (the server's replay loses it; EVT-REPLAY-POST and REPLAY-GAP grade replay); %s",
			got, want, lastID, e.byStream(k, streams...))
	}
	e.Failf("the call's response came on neither of two resumes from %s, and its notifications stopped at %d of %d: "+
		"the call was cancelled when its stream was dropped, or the server's replay lost the rest; %s", lastID, got, want, e.byStream(k, streams...))
	return wire.Message{}
}

// responseOn waits, at most callWait, for the call's response on c, and
// no longer than c stays open.
func (e *env) responseOn(k *call, c *collector) (wire.Message, bool) {
	var m wire.Message
	ok := false
	e.WaitUntil(e.callWait(), func() bool {
		ended := c.Ended() // read first: once ended, every event is in
		m, ok = k.response(c.Messages())
		return ok || ended
	})
	return m, ok
}
