package serverchecks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// toolAsDeclared is the check that grades the undisturbed call; the
// harness observes that call under its entry before the other checks run.
var toolAsDeclared = catalogue.Entry{ID: "TOOL-AS-DECLARED", Level: catalogue.Res, Section: "streams-res", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.ResilienceProfile + "declared-notifications", Needs: []catalogue.Key{catalogue.KeyNotifying},
	Summary: "A call of the notifying tool that no fault disturbs delivers every notification the profile declares (tools.notifying), then its result: the checks that count them judge what a fault cost against that."}

// baselineToken names the progress token of the undisturbed call.
const baselineToken = "undisturbed"

// observeSlack is what the undisturbed call may take beyond twice the
// tool's declared run before it counts as unanswered.
const observeSlack = 10 * time.Second

// Baseline is what one call of the notifying tool showed that no fault
// disturbed: the call on its own POST stream, with the standalone GET
// stream held where the target offers one. The checks that count the
// tool's notifications judge what a fault cost against it, not against
// the declaration alone, and bound their waits by what it took.
type Baseline struct {
	// Tool is the notifying tool; Declared is how many notifications the
	// profile says one call sends.
	Tool     string
	Declared int
	// Delivered counts the call's notifications, each once whichever
	// stream carried it; OnPOST and OnGET count them on each stream.
	Delivered, OnPOST, OnGET int
	// Progress lists their progress values ("1 2 3 4"), when they have any.
	Progress string
	// Answered: the call's response came. Error is how the call ended
	// instead of with a result: its error response, or its refused request.
	Answered bool
	Error    string
	// Ended: the call's POST stream ended without its response.
	Ended bool
	// Took is from the request to the response, or to the end of the wait
	// when none came. Gap is the longest wait for a notification (for the
	// first, from the request).
	Took, Gap time.Duration
	// Unobserved is why the call could not be observed (the harness's own
	// setup failed, or the target answers tools/call with JSON): the
	// checks then judge against the declaration, as without a baseline.
	Unobserved string
	// Exchange is the call's exchange log.
	Exchange string
}

// ObserveBaseline makes one call of tc's notifying tool straight to the
// target, with no fault proxy in between, and returns what it showed. It
// returns nil when the profile declares no notifying tool or the check
// does not apply to the target.
func ObserveBaseline(ctx context.Context, tc *Target) *Baseline {
	n := tc.Config.Tools.Notifying
	if n == nil || wire.Revision(tc.ProtocolVersion).Sessionless() {
		return nil
	}
	direct := *tc
	direct.Faults, direct.Baseline = nil, nil
	var got atomic.Pointer[Baseline]
	c := kit.Check{Entry: serverEntry(toolAsDeclared), Run: func(t *kit.T) {
		got.Store(direct.setup(t, def{Entry: serverEntry(toolAsDeclared)}).observe(t.Context()))
	}}
	r := kit.Execute(ctx, c, observeWait(tc.Config)+quiet(tc.Config)+observeSlack)
	b := got.Load()
	switch {
	case b == nil && r.State == kit.Skipped:
		return nil
	case b == nil:
		b = &Baseline{Tool: n.Name, Declared: n.Notifications, Unobserved: "the harness could not make the call: " + r.Message}
	}
	b.Exchange = r.Exchange
	return b
}

// observeWait bounds the undisturbed call's wait for its response.
func observeWait(c *target.Profile) time.Duration { return 2*toolRun(c) + observeSlack }

// observe calls the notifying tool once, holding the standalone GET
// stream where the target offers one, waits for the response (at most
// observeWait) and a quiet window more for anything late, and counts
// what came.
func (e *env) observe(ctx context.Context) *Baseline {
	n := e.Config.Tools.Notifying
	b := &Baseline{Tool: n.Name, Declared: n.Notifications}
	sid := e.connect(ctx, e.C)
	var streams []*collector
	if s, err := e.get(ctx, e.C, sid, ""); err == nil {
		streams = append(streams, e.collect("the standalone GET stream", s))
	} else {
		e.Logf("no standalone GET stream (%v): only the call's POST stream is watched", err)
	}
	body, k := e.notifyingRequest(e.C, baselineToken)
	began := time.Now()
	s, err := e.C.OpenPOST(ctx, sid, body)
	switch se := new(wire.StatusError); {
	case errors.As(err, &se) && se.Status == http.StatusOK:
		b.Unobserved = "the target answered tools/call with a JSON body, not an SSE stream"
		return b
	case err != nil && ctx.Err() != nil:
		e.Inconclusivef("the check's deadline passed while the harness called %s (%v)", n.Name, err)
	case err != nil:
		b.Error, b.Took = fmt.Sprintf("a refused tools/call (%v)", err), time.Since(began)
		return b
	}
	k.post = e.collect("the call's POST stream", s)
	streams = append([]*collector{k.post}, streams...)
	seen := map[string]bool{}
	var order []string
	last := began
	track := func() {
		for _, c := range streams {
			for _, note := range e.notes(c.Messages(), k) {
				if !seen[note] {
					seen[note], order = true, append(order, note)
					b.Gap, last = max(b.Gap, time.Since(last)), time.Now()
				}
			}
		}
	}
	answered := func() bool {
		ended := k.post.Ended() // read first: once ended, every event is in
		track()
		for _, c := range streams {
			if m, ok := k.response(c.Messages()); ok {
				b.Answered, b.Took = true, time.Since(began)
				if m.Error != nil {
					b.Error = m.Error.Error()
				}
				return true
			}
		}
		b.Ended = ended
		return ended
	}
	if !e.WaitUntil(observeWait(e.Config), answered) || !b.Answered {
		b.Took = time.Since(began)
	} else {
		e.WaitUntil(quiet(e.Config), func() bool { track(); return false }) // anything sent after the response
	}
	b.OnPOST = len(e.notes(k.post.Messages(), k))
	if len(streams) > 1 {
		b.OnGET = len(e.notes(streams[1].Messages(), k))
	}
	b.Delivered = len(order)
	slices.SortStableFunc(order, func(x, y string) int {
		p, _ := progressOf(x)
		q, _ := progressOf(y)
		return cmp.Compare(p, q)
	})
	if list := progressList(order); len(order) > 0 && list != fmt.Sprintf("%d notifications", len(order)) {
		b.Progress = list
	}
	e.Logf("%s", b)
	return b
}

// count says how many notifications the call delivered against the
// declaration, with their progress values.
func (b *Baseline) count() string {
	s := fmt.Sprintf("%d of the %d declared notifications", b.Delivered, b.Declared)
	if b.Delivered > b.Declared {
		s = fmt.Sprintf("%d notifications, %d declared", b.Delivered, b.Declared)
	}
	if b.Progress != "" {
		s += " (progress " + b.Progress + ")"
	}
	return s
}

// Shortfall says how the call fell short of what the profile declares;
// "" when it did what it declares, or when no call was observed.
func (b *Baseline) Shortfall() string {
	if b == nil || b.Unobserved != "" {
		return ""
	}
	call := "an undisturbed call of " + b.Tool
	switch {
	case b.Error != "":
		return fmt.Sprintf("%s ended with %s after %s", call, b.Error, b.count())
	case b.Ended && !b.Answered:
		return fmt.Sprintf("%s delivered %s, then its POST stream ended without a response", call, b.count())
	case !b.Answered:
		return fmt.Sprintf("%s delivered %s and no response within %v", call, b.count(), b.Took.Round(time.Millisecond))
	case b.Delivered != b.Declared:
		return fmt.Sprintf("%s delivered %s", call, b.count())
	}
	return ""
}

// String says everything the call showed, for the console and the log.
func (b *Baseline) String() string {
	if b.Unobserved != "" {
		return fmt.Sprintf("no undisturbed call of %s observed: %s", b.Tool, b.Unobserved)
	}
	s := fmt.Sprintf("an undisturbed call of %s delivered %s: %d on its POST stream, %d on the standalone GET stream",
		b.Tool, b.count(), b.OnPOST, b.OnGET)
	if b.Delivered > 0 {
		s += fmt.Sprintf(", at most %v apart", b.Gap.Round(time.Millisecond))
	}
	switch {
	case b.Error != "":
		return s + fmt.Sprintf("; it ended with %s after %v", b.Error, b.Took.Round(time.Millisecond))
	case b.Answered:
		return s + fmt.Sprintf("; answered in %v", b.Took.Round(time.Millisecond))
	case b.Ended:
		return s + "; its POST stream ended without a response"
	}
	return s + fmt.Sprintf("; no response within %v", b.Took.Round(time.Millisecond))
}

// bound is how long a check waits for the tool's notifications or its
// response: twice what the undisturbed call took, plus two quiet
// windows and busySlack; 0 (the check's deadline) when no call was
// observed.
func (b *Baseline) bound(c *target.Profile) time.Duration {
	if b == nil || b.Unobserved != "" {
		return 0
	}
	return 2*b.Took + 2*quiet(c) + busySlack
}

// busySlack is what a busy machine can add to one call beside the checks
// running at once: on two cores under load, single requests were seen to
// take 2-3 s. A healthy target slowed by the harness's own load must not
// run past its bound; a target that never sends what is awaited still
// fails in seconds.
const busySlack = 3 * time.Second

// erred reports whether the undisturbed call ended with an error.
func (b *Baseline) erred() bool { return b != nil && b.Error != "" }

// asDeclared grades the undisturbed call the harness observed before the
// checks (or, without one, a call it makes now, through the check's
// proxy with no fault armed): it must do what the profile declares.
func (e *env) asDeclared(ctx context.Context) {
	b := e.baseline()
	if b == nil {
		if o := e.target.Baseline; o != nil {
			e.Logf("the undisturbed call before the checks was not observed (%s): making one now", o.Unobserved)
		}
		b = e.observe(ctx)
	} else {
		e.Logf("the undisturbed call the harness made before the checks:\n%s", b.Exchange)
	}
	if b.Unobserved != "" {
		e.Skip(report.Unobservable, b.Unobserved+": the checks that need the call's stream skip too")
	}
	e.Logf("%s", b)
	if short := b.Shortfall(); short != "" {
		e.Failf("%s: %s; the checks that count the tool's notifications judge them against what this call delivered", short, b.cause())
	}
}

// cause says what a shortfall can come from.
func (b *Baseline) cause() string {
	switch {
	case b.Error != "" || !b.Answered:
		return "the tool does not answer as the profile declares (tools.notifying), with no fault at all"
	case b.Delivered > b.Declared:
		return "the profile declares fewer notifications than the tool sends (tools.notifying.notifications)"
	}
	return "the target loses notifications with no fault at all, or the profile declares more than the tool sends (tools.notifying.notifications)"
}
