package serverchecks

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/target"
)

// graceSlack absorbs scheduling and network delay around declared timings.
const graceSlack = 500 * time.Millisecond

// expiry is the longest a silent session may live: idle threshold, grace
// period, one reaper interval, and slack.
func expiry(c *target.Config) time.Duration {
	t := c.Timings
	return t.IdleThreshold.D() + t.GracePeriod.D() + t.ReaperInterval.D() + graceSlack
}

// graceNeed is what a grace check needs: a silent session's longest life.
func graceNeed(c *target.Config) time.Duration { return expiry(c) + graceSlack }

// graceChecks are the grace checks.
func graceChecks() []def {
	return []def{
		{id: "GRACE-IDLE-SURVIVES", need: graceNeed, body: func(ctx context.Context, e *env) {
			e.needGracePeriod()
			sid := e.connect(ctx, e.C)
			t := e.Config.Timings
			silence := t.IdleThreshold.D() + t.GracePeriod.D()/2
			e.Logf("silent for %v (idle threshold + half the grace period)", silence)
			e.Pause(silence)
			e.expectWorks(ctx, e.C, sid)
		}},

		{id: "GRACE-EXPIRES", need: graceNeed, body: func(ctx context.Context, e *env) {
			sid := e.connect(ctx, e.C)
			e.Logf("silent for %v (idle threshold + grace period + reaper interval + slack)", expiry(e.Config))
			e.Pause(expiry(e.Config))
			resp, err := e.C.Call(ctx, sid, "tools/list", nil)
			e.Expect(err).NotTo(HaveOccurred())
			e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list on a session silent past its grace period")
		}},

		{id: "GRACE-ACTIVITY-RESETS", need: graceNeed, body: func(ctx context.Context, e *env) {
			// Two sessions, each kept up by one kind of request only, so a server
			// that counts only POSTs (or only GETs) as activity is caught.
			byPOST, byGET := e.connect(ctx, e.C), e.connect(ctx, e.C)
			// On a fixed schedule, not a pause after each round: a slow round
			// must not stretch the silence past what the check declares.
			every := e.Config.Timings.IdleThreshold.D() / 3
			e.Logf("for %v: tools/list on one session and a short GET on the other, every %v", expiry(e.Config), every)
			next := time.Now()
			for end := next.Add(expiry(e.Config)); time.Now().Before(end); {
				next = next.Add(every)
				if wait := time.Until(next); wait > 0 {
					e.Pause(wait)
				}
				e.expectWorks(ctx, e.C, byPOST)
				e.openGET(ctx, e.C, byGET, "").Close()
			}
			e.expectWorks(ctx, e.C, byPOST)
			e.expectWorks(ctx, e.C, byGET)
		}},

		{id: "GRACE-LIVE-STREAM", need: graceNeed, body: func(ctx context.Context, e *env) {
			sid := e.connect(ctx, e.C)
			get := e.openGET(ctx, e.C, sid, "")
			e.Logf("no requests for %v while the GET stream stays open", expiry(e.Config))
			e.Pause(expiry(e.Config))
			e.Expect(get.Ended()).To(BeFalse(), "the server ended the standalone GET stream of a connected client")
			e.expectWorks(ctx, e.C, sid)
		}},

		{id: "GRACE-RECONNECT-CANCELS", need: graceNeed, body: func(ctx context.Context, e *env) {
			e.needGracePeriod()
			start := time.Now()
			sid := e.connect(ctx, e.C)
			t := e.Config.Timings
			// Into the grace period: past the idle threshold and one reaper pass,
			// well before the grace period ends.
			inGrace := t.IdleThreshold.D() + t.GracePeriod.D()/2
			if g, r := t.GracePeriod.D(), t.ReaperInterval.D(); g > r {
				inGrace = t.IdleThreshold.D() + r + (g-r)/2
			}
			e.Pause(inGrace)
			e.Logf("reconnecting during the grace period")
			e.expectWorks(ctx, e.C, sid)
			e.Pause(time.Until(start.Add(expiry(e.Config))))
			e.expectWorks(ctx, e.C, sid)
		}},
	}
}

// needGracePeriod skips a check about the grace period itself when the
// target declares none (grace_period: 0s, an idle TTL alone).
func (e *env) needGracePeriod() {
	if e.Config.Timings.GracePeriod == 0 {
		e.Skip("the target declares no grace period (timings.grace_period: 0s): a session expires at its idle threshold")
	}
}
