package serverchecks

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// isolatedSession is one of the two sessions of MSG-SESSION-ISOLATED:
// its own client, its standalone stream where the target offers one, and
// its call.
type isolatedSession struct {
	name string
	c    *wire.Client
	sid  string
	get  *collector
	k    *call
}

// streams are the session's streams the check holds.
func (s *isolatedSession) streams() []*collector {
	if s.get == nil {
		return []*collector{s.k.post}
	}
	return []*collector{s.k.post, s.get}
}

// sessionsIsolated opens two sessions, each with its own client and its
// standalone stream, runs a call of the notifying tool in each at once,
// and judges every message on each session's streams: a progress
// notification must carry that session's call's token, and a response the
// id of a request that session's client sent. Anything else came from
// another session: this check's other one, or any other check's running
// beside it, whose tokens and ids are unique in the run.
func (e *env) sessionsIsolated(ctx context.Context) {
	if m := e.Config.Tools.Notifying.Method; m != "notifications/progress" {
		e.Skipf(report.Unobservable, "the profile counts %s, which names no request: which session a notification belongs to cannot be told", m)
	}
	sessions := []*isolatedSession{{name: "session A", c: e.C}, {name: "session B", c: e.client(e.C.URL, e.Config.RequestHeader())}}
	for _, s := range sessions {
		s.sid = e.connect(ctx, s.c)
		s.get = e.optionalGET(ctx, s.c, s.sid, "the standalone GET stream of "+s.name)
	}
	for _, s := range sessions { // both calls run at once
		s.k = e.startNotifying(ctx, s.c, s.sid, "isolated-"+strings.ToLower(s.name[len(s.name)-1:]))
		s.k.post.name = "the POST stream of " + s.name + "'s call"
	}
	for _, s := range sessions {
		e.awaitResponse(ctx, s.k, s.k.post)
	}
	e.Pause(quiet(e.Config)) // anything sent to another session's stream arrives meanwhile
	var wrong []string
	for i, s := range sessions {
		other := sessions[1-i]
		for _, c := range s.streams() {
			for _, m := range c.Messages() {
				if w := foreignTo(s, other, m, e.owns); w != "" {
					wrong = append(wrong, fmt.Sprintf("%s on %s", w, c.name))
				}
			}
		}
	}
	if len(wrong) > 0 {
		if len(wrong) > 6 {
			wrong = append(wrong[:6], fmt.Sprintf("and %d more", len(wrong)-6))
		}
		e.Failf("messages of another session on a session's streams: %s; a server sends each message on one stream of the session it belongs to", strings.Join(wrong, "; "))
	}
	for _, s := range sessions {
		e.expectOwnNotes(s.k, s.streams()...)
	}
}

// foreignTo says why m, on one of s's streams, is not s's: a progress
// notification of another call, a response to the other session's request
// or to none of the check's (owns); "" when it is s's own.
func foreignTo(s, other *isolatedSession, m wire.Message, owns func(wire.Message) bool) string {
	if tok, ok := progressTokenOf(m); ok && tok != s.k.token {
		if tok == other.k.token {
			return fmt.Sprintf("a progress notification of the call in %s (token %q)", other.name, tok)
		}
		return fmt.Sprintf("a progress notification of a call no request of %s made (token %q)", s.name, tok)
	}
	switch {
	case !m.IsResponse() || s.k.isResponse(m):
	case other.c.Issued(m.ID):
		return fmt.Sprintf("the response to %s's request %s", other.name, quoted(string(m.ID), 40))
	case !owns(m): // the harness's own requests on s (keep-warm) are s's
		return fmt.Sprintf("a response with id %s, which no request of %s carried", quoted(string(m.ID), 40), s.name)
	}
	return ""
}

// optionalGET opens c's standalone stream on session sid, named name;
// nil when the target answers 405 (it offers none). Another refusal is
// the GET premise's failure.
func (e *env) optionalGET(ctx context.Context, c *wire.Client, sid, name string) *collector {
	s, err := e.get(ctx, c, sid, "")
	if isStatus(err, http.StatusMethodNotAllowed) {
		e.Logf("GET answered 405: %s is not offered; only the POST streams are watched", name)
		return nil
	}
	e.OnPremise(catalogue.PremiseGETStream, func() { e.Expect(err).NotTo(HaveOccurred(), "%s", name) })
	return e.collect(name, s)
}

// progressIncreases runs two calls of the notifying tool at once in one
// session (none on a stateless target) and judges every progress
// notification by its token: under each call's token the values increase
// on every stream that carries them, and none comes twice. A server that
// labels one call's progress with another's token (a token kept per tool,
// not per call) interleaves two sequences under one token, which shows
// as a value that does not increase.
func (e *env) progressIncreases(ctx context.Context) {
	if m := e.Config.Tools.Notifying.Method; m != "notifications/progress" {
		e.Skipf(report.Unobservable, "the profile counts %s, not progress notifications", m)
	}
	sid := e.sessionOrNone(ctx, e.C)
	var streams []*collector
	if !e.stateless() && !e.modern() {
		if get := e.optionalGET(ctx, e.C, sid, "the standalone GET stream"); get != nil {
			streams = append(streams, get)
		}
	}
	a := e.startNotifying(ctx, e.C, sid, "increases-a")
	b := e.startNotifying(ctx, e.C, sid, "increases-b")
	a.post.name, b.post.name = "call A's POST stream", "call B's POST stream"
	streams = append(streams, a.post, b.post)
	e.awaitResponse(ctx, a, a.post)
	e.awaitResponse(ctx, b, b.post)
	e.Pause(quiet(e.Config))
	// Judged stream by stream: the same value on two streams is a message
	// sent on both (MSG-ONE-STREAM's), not a value that did not increase.
	judged := false
	for _, k := range []*call{a, b} {
		for _, c := range streams {
			last, n := 0.0, 0
			for _, note := range e.notes(c.Messages(), k) {
				p, ok := progressOf(note)
				if !ok {
					continue
				}
				switch {
				case n > 0 && p == last:
					e.Failf("progress %v of the call with token %q came twice on %s: the progress value must increase with each notification; %s",
						p, k.token, c.name, progressByStream([]*call{a, b}, streams))
				case n > 0 && p < last:
					e.Failf("the progress of the call with token %q went from %v to %v on %s: the progress value must increase with each notification; %s",
						k.token, last, p, c.name, progressByStream([]*call{a, b}, streams))
				}
				last, n = p, n+1
			}
			judged = judged || n >= 2
		}
	}
	if !judged {
		// Fewer than two values under a token on any stream: nothing to compare.
		e.expectOwnNotes(a, streams...)
		e.expectOwnNotes(b, streams...)
		e.Skipf(report.Unobservable, "neither call had two progress notifications with its token to compare; %s", progressByStream([]*call{a, b}, streams))
	}
}
