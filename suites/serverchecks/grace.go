package serverchecks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// graceSlack absorbs scheduling and network delay around declared timings.
const graceSlack = 500 * time.Millisecond

// expiry is the longest a silent session may live: idle threshold, grace
// period, one reaper interval, and slack.
func expiry(c *target.Profile) time.Duration {
	t := c.Timings
	return t.IdleThreshold.D() + t.GracePeriod.D() + t.ReaperInterval.D() + graceSlack
}

// idleAttempts bounds survivesSilence's attempts at a silence that delays
// did not stretch past the grace period.
const idleAttempts = 3

// graceNeed is what a grace check needs: a silent session's longest life.
func graceNeed(c *target.Profile) time.Duration { return expiry(c) + graceSlack }

// graceChecks are the grace checks.
func graceChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "GRACE-IDLE-SURVIVES", Level: catalogue.Res, Section: "grace", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "grace-period-reaper", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true,
			Summary: "A session silent for less than idle threshold + grace period still works."},
			need: graceNeed, body: func(ctx context.Context, e *env) {
				e.needGracePeriod()
				t := e.Config.Timings
				e.survivesSilence(ctx, t.IdleThreshold.D()+t.GracePeriod.D()/2, "idle threshold + half the grace period")
			}},

		{Entry: catalogue.Entry{ID: "GRACE-EXPIRES", Level: catalogue.Res, Section: "grace", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "grace-period-reaper", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true, DependsOn: []string{"SESS-UNKNOWN-404"},
			Summary: "A session silent for idle threshold + grace period (+ one reaper interval) is gone: 404."},
			need: graceNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				e.Logf("silent for %v (idle threshold + grace period + reaper interval + slack)", expiry(e.Config))
				e.Pause(expiry(e.Config))
				resp, err := e.C.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list on a session silent past its grace period")
			}},

		{Entry: catalogue.Entry{ID: "GRACE-ACTIVITY-RESETS", Level: catalogue.Res, Section: "grace", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "grace-period-reaper", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true,
			Summary: "A session used at intervals shorter than the idle threshold is never reaped."},
			need: graceNeed, body: func(ctx context.Context, e *env) {
				// Two sessions, each kept up by one kind of request only, so a server
				// that counts only POSTs (or only GETs) as activity is caught.
				// The harness measures the silences it leaves itself: on a busy
				// machine a round can come late, and a session the harness left
				// silent long enough to expire is no defect of the target.
				postActs, getActs := &activity{last: time.Now()}, &activity{}
				byPOST := e.connect(ctx, e.C)
				getActs.last = time.Now()
				byGET := e.connect(ctx, e.C)
				// On a fixed schedule, not a pause after each round: a slow round
				// must not stretch the silence past what the check declares.
				// Every half idle threshold: short of it with room to spare
				// (the silences are measured), and far enough apart that a
				// server still finishing the last short GET does not take the
				// next for a reloaded page's.
				every := e.Config.Timings.IdleThreshold.D() / 2
				e.Logf("for %v: tools/list on one session and a short GET on the other, every %v", expiry(e.Config), every)
				// A late round is not followed by a burst of catch-up rounds:
				// requests a few milliseconds apart are not what a client that
				// stays active sends, and a server may take a GET right after
				// another for a reloaded page. The silences this leaves are
				// measured all the same.
				next := time.Now()
				for end := next.Add(expiry(e.Config)); time.Now().Before(end); {
					next = next.Add(every)
					if earliest := time.Now().Add(every / 2); next.Before(earliest) {
						next = earliest
					}
					if wait := time.Until(next); wait > 0 {
						e.Pause(wait)
					}
					e.keptActive(ctx, postActs, byPOST, "tools/list")
					e.keptActive(ctx, getActs, byGET, "GET")
				}
				e.keptActive(ctx, postActs, byPOST, "tools/list")
				e.keptActive(ctx, getActs, byGET, "tools/list")
			}},

		{Entry: catalogue.Entry{ID: "GRACE-LIVE-STREAM", Level: catalogue.Res, Section: "grace", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "grace-period-reaper", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true,
			Summary: "A session whose standalone GET stream is connected is not reaped."},
			need: graceNeed, body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				get := e.openGET(ctx, e.C, sid, "")
				e.Logf("no requests for %v while the GET stream stays open", expiry(e.Config))
				e.Pause(expiry(e.Config))
				e.Expect(get.Ended()).To(BeFalse(), "the server ended the standalone GET stream of a connected client")
				e.expectWorks(ctx, e.C, sid)
			}},

		{Entry: catalogue.Entry{ID: "GRACE-RECONNECT-CANCELS", Level: catalogue.Res, Section: "grace", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "grace-period-reaper", Needs: []catalogue.Key{catalogue.KeyGraceTimings}, Idle: true, DependsOn: []string{"GRACE-IDLE-SURVIVES"},
			Summary: "A request during the grace period cancels the pending expiry."},
			need: graceNeed, body: func(ctx context.Context, e *env) {
				e.needGracePeriod()
				t := e.Config.Timings
				// Into the grace period: past the idle threshold and one reaper pass,
				// well before the grace period ends.
				inGrace := t.IdleThreshold.D() + t.GracePeriod.D()/2
				if g, r := t.GracePeriod.D(), t.ReaperInterval.D(); g > r {
					inGrace = t.IdleThreshold.D() + r + (g-r)/2
				}
				sid, start := e.survivesSilence(ctx, inGrace, "into the grace period, then reconnecting")
				e.Pause(time.Until(start.Add(expiry(e.Config))))
				e.expectWorks(ctx, e.C, sid)
			}},
	}
}

// survivesSilence connects a session, keeps it silent for silence (less
// than the idle threshold plus the grace period) and expects a tools/list
// on it to work. It returns the session and when its initialize began.
//
// Gone sooner than idle threshold + grace period after the initialize
// began is gone too early, whatever the delays. Gone later, the delays (a
// loaded machine, a slow network) may have stretched the silence the server
// saw past its grace period: it tries again with a new session, at most
// idleAttempts times in all (they fit in the check's deadline, twice
// graceNeed plus the margin).
func (e *env) survivesSilence(ctx context.Context, silence time.Duration, why string) (string, time.Time) {
	t := e.Config.Timings
	window := t.IdleThreshold.D() + t.GracePeriod.D()
	for attempt := 1; ; attempt++ {
		began := time.Now()
		sid := e.connect(ctx, e.C)
		e.Logf("silent for %v (%s)", silence, why)
		e.Pause(silence)
		resp, err := e.C.Call(ctx, sid, "tools/list", nil)
		e.Expect(err).NotTo(HaveOccurred())
		took := time.Since(began).Round(time.Millisecond)
		switch {
		case works(resp):
			return sid, began
		case took < window:
			e.Failf("tools/list on session %q after a silence of %v (%s), %v after its initialize began, within the %v it must survive: %d %s",
				sid, silence, why, took, window, resp.Status, resp.Body)
		case attempt == idleAttempts:
			e.Inconclusivef("tools/list on session %q after a silence of %v (%s): %d %s; but in each of %d attempts %v or more, after which it may expire, passed from the initialize to the answer: the harness's delays (a loaded machine, a slow network) stretched the silence",
				sid, silence, why, resp.Status, resp.Body, idleAttempts, window)
		}
		e.Logf("the session was gone, but %v passed from the initialize to the answer, at least the %v after which it may expire: again", took, window)
	}
}

// needGracePeriod skips a check about the grace period itself when the
// target declares none (grace_period: 0s, an idle TTL alone).
func (e *env) needGracePeriod() {
	if e.Config.Timings.GracePeriod == 0 {
		e.Skip(report.NotApplicable, "the target declares no grace period (timings.grace_period: 0s): a session expires at its idle threshold")
	}
}

// activity is what the harness knows of the silences it left a session:
// when its last request began, and the longest silence the target may
// have seen (from one request's start to the end of the next).
type activity struct {
	last    time.Time
	longest time.Duration
}

// keptActive sends a request of the given kind (tools/list, or a GET
// stream opened and closed) on a session the check keeps active, and
// expects it to work. When it does not and the harness itself left the
// session silent for as long as the target may let one live, the check
// is inconclusive rather than failed.
func (e *env) keptActive(ctx context.Context, a *activity, sid, kind string) {
	e.Helper()
	began := time.Now()
	var failure string
	if kind == "GET" {
		s, err := e.get(ctx, e.C, sid, "")
		switch se := new(wire.StatusError); {
		case err == nil:
			e.collect("GET", s).Close()
		case isStatus(err, http.StatusMethodNotAllowed):
			e.Logf("GET answered 405 (no standalone stream): the session is kept active with tools/list instead")
			kind = "tools/list"
		case errors.As(err, &se) && se.Status != http.StatusNotFound:
			// Refused, not expired: the GET stream is not offered.
			e.OnPremise(catalogue.PremiseGETStream, func() { e.Failf("a GET on session %q: %v", sid, err) })
		default:
			failure = fmt.Sprintf("a GET on session %q: %v", sid, err)
		}
	}
	if kind != "GET" {
		resp, err := e.C.Call(ctx, sid, "tools/list", nil)
		switch {
		case err != nil:
			failure = fmt.Sprintf("tools/list on session %q: %v", sid, err)
		case !works(resp):
			failure = fmt.Sprintf("tools/list on session %q: %d %s", sid, resp.Status, resp.Body)
		}
	}
	if gap := time.Since(a.last); gap > a.longest {
		a.longest = gap
	}
	a.last = began
	if failure == "" {
		return
	}
	if lives := e.silentLife(); lives > 0 && a.longest >= lives {
		e.Inconclusivef("%s; but the harness itself left the session silent for up to %v (its requests came late on a busy machine), at least the %v after which the target may expire it",
			failure, a.longest.Round(10*time.Millisecond), lives)
	}
	e.Failf("%s, though the harness left it silent for at most %v, less than the %v (idle threshold + grace period) after which it may expire", failure, a.longest.Round(10*time.Millisecond), e.silentLife())
}
