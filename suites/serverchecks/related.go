package serverchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// relatedStreams runs two calls of the notifying tool side by side in one
// session and judges every progress notification on each call's POST
// stream by its token: it must be that call's. Other notifications
// (logging) name no request, so they are not judged, whatever method the
// profile counts.
func (e *env) relatedStreams(ctx context.Context) {
	sid := e.sessionOrNone(ctx, e.C)
	// A standalone stream, where the target allows one, shows where the
	// calls' notifications went if not on their POST streams. The
	// sessionless revision has none.
	var get *collector
	if !e.modern() {
		if s, err := e.get(ctx, e.C, sid, ""); err == nil {
			get = e.collect("the standalone GET stream", s)
		} else {
			e.Logf("no standalone GET stream (%v): only the POST streams are watched", err)
		}
	}
	a := e.startNotifying(ctx, e.C, sid, "related-a")
	b := e.startNotifying(ctx, e.C, sid, "related-b")
	a.post.name = "call A's POST stream (token " + a.token + ")"
	b.post.name = "call B's POST stream (token " + b.token + ")"
	e.awaitResponse(ctx, a, a.post)
	e.awaitResponse(ctx, b, b.post)

	calls := []*call{a, b}
	wrong, own := unrelatedNotes(calls)
	streams := []*collector{a.post, b.post}
	if get != nil {
		streams = append(streams, get)
	}
	if len(wrong) > 0 {
		e.Failf("%s: a POST stream's notifications %s relate to the request that opened it; %s",
			strings.Join(wrong, "; "), strings.ToLower(string(e.Entry.Level)), progressByStream(calls, streams))
	}
	if own > 0 {
		return
	}
	e.Pause(quiet(e.Config)) // notifications sent to the standalone stream arrive meanwhile
	if get != nil && len(progressWith(get, a.token))+len(progressWith(get, b.token)) > 0 {
		e.Skipf(report.Unobservable, "the target sends the calls' progress notifications on the standalone GET stream, none on their POST streams: which request a POST stream's notifications relate to cannot be judged (%s)",
			progressByStream(calls, []*collector{get}))
	}
	e.Skipf(report.Unobservable, "neither call's progress notifications came on any stream the check held (%s): which request a POST stream's notifications relate to cannot be judged (the profile counts %s)",
		heldStreams(streams), e.Config.Tools.Notifying.Method)
}

// unrelatedNotes judges the progress notifications on each call's POST
// stream by their tokens: it says, per stream and token, how many belong
// to another request, and counts those that belong to the stream's own.
func unrelatedNotes(calls []*call) (wrong []string, own int) {
	for _, k := range calls {
		foreign := map[string]int{}
		for _, m := range k.post.Messages() {
			switch tok, ok := progressTokenOf(m); {
			case !ok:
			case tok == k.token:
				own++
			default:
				foreign[tok]++
			}
		}
		for _, tok := range slices.Sorted(maps.Keys(foreign)) {
			n := foreign[tok]
			wrong = append(wrong, fmt.Sprintf("%s carried %d progress notification%s of %s", k.post.name, n, map[bool]string{true: "s"}[n != 1], whose(tok, calls)))
		}
	}
	return wrong, own
}

// progressTokenOf returns a progress notification's token as the calls
// compare it (see isNote); ok is false for other messages and for a
// progress notification without a token.
func progressTokenOf(m wire.Message) (string, bool) {
	if m.Method != "notifications/progress" {
		return "", false
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.Token == nil {
		return "", false
	}
	return fmt.Sprint(p.Token), true
}

// whose names the call a progress token belongs to.
func whose(token string, calls []*call) string {
	for i, k := range calls {
		if k.token == token {
			return fmt.Sprintf("call %c (token %s)", 'A'+i, token)
		}
	}
	return fmt.Sprintf("token %q, which is neither call's", token)
}

// heldStreams lists the streams' names.
func heldStreams(streams []*collector) string {
	names := make([]string, len(streams))
	for i, c := range streams {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// progressWith returns the progress values of the progress notifications
// with token on c ("?" for one without a value).
func progressWith(c *collector, token string) []string {
	var out []string
	for _, m := range c.Messages() {
		if tok, ok := progressTokenOf(m); ok && tok == token {
			if p, ok := progressOf(string(m.Params)); ok {
				out = append(out, strconv.FormatFloat(p, 'f', -1, 64))
			} else {
				out = append(out, "?")
			}
		}
	}
	return out
}

// progressByStream says which progress notifications of each call came on
// which stream ("call A's progress by stream: ...: 1 2; ...: none").
func progressByStream(calls []*call, streams []*collector) string {
	var parts []string
	for i, k := range calls {
		var where []string
		for _, c := range streams {
			got := progressWith(c, k.token)
			if len(got) == 0 {
				got = []string{"none"}
			}
			where = append(where, c.name+": "+strings.Join(got, " "))
		}
		parts = append(parts, fmt.Sprintf("call %c's progress by stream: %s", 'A'+i, strings.Join(where, "; ")))
	}
	return strings.Join(parts, "; ")
}
