package serverchecks

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// SessionLost begins the diagnosis of a check whose held session the
// target expired: what failed after it follows from that.
const SessionLost = "the session expired during the check"

// watch looks after a session the check made, unless the check is about
// idleness or restarts the target:
//   - it keeps the session warm: a tools/list straight to the target (past
//     the fault proxy, so faults do not stop it) every third of the
//     declared idle threshold, so that a check never lets its session go
//     silent longer than that;
//   - if the check fails or skips, it asks whether the session still
//     exists, and when the target says it does not (see gone) the verdict
//     says so first: the finding then follows from an expiry, not from
//     the behaviour the check is about (and a skip becomes a failure).
func (e *env) watch(c *wire.Client, sid string) {
	if e.Entry.Idle || e.Entry.Restarts {
		return
	}
	born := time.Now()
	direct := e.newClient(e.target.URL)
	direct.ProtocolVersion, direct.Header = c.ProtocolVersion, c.Header.Clone()
	direct.FollowRedirects = e.target.FollowRedirects
	e.Diagnose(func(ctx context.Context) string {
		if e.ended(sid) {
			return ""
		}
		resp, err := direct.Post(ctx, sid, direct.Request("tools/list", nil))
		if err != nil || !gone(resp) {
			return ""
		}
		return fmt.Sprintf(SessionLost+": tools/list on it got %d %v after it was created%s. "+
			"A session the check holds must not expire (see GRACE-LIVE-STREAM and GRACE-ACTIVITY-RESETS); what the check saw after that follows from it:",
			resp.Status, time.Since(born).Round(100*time.Millisecond), e.warmNote())
	})
	every := e.Config.Timings.IdleThreshold.D() / 3
	if every <= 0 {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	inflight := make(chan struct{}, maxKeepWarm)
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if e.ended(sid) {
				return
			}
			// One request per tick, not waiting for the last: on a busy
			// machine one may take longer than a tick, and a request cut
			// short may not count as activity. A few at most in flight.
			select {
			case inflight <- struct{}{}:
			default:
				continue
			}
			wg.Go(func() {
				defer func() { <-inflight }()
				rctx, cancel := context.WithTimeout(ctx, keepWarmTimeout)
				defer cancel()
				_, _ = direct.Post(rctx, sid, direct.Request("tools/list", nil))
			})
		}
	})
	e.Cleanup(func(context.Context) { stop(); wg.Wait() })
	e.Logf("session %s kept warm: tools/list every %v, straight to the target (not logged)", sid, every)
}

// gone reports whether resp says the session it was sent on does not
// exist: 404, as the specification says, or the 400 that some servers
// answer for a session they do not know, when its body speaks of the
// session (a 400 about anything else is not an expiry).
func gone(resp *wire.Response) bool {
	switch resp.Status {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		return strings.Contains(strings.ToLower(string(resp.Body)), "session")
	}
	return false
}

// maxKeepWarm bounds the keep-warm requests in flight for one session.
const maxKeepWarm = 3

// keepWarmTimeout bounds one keep-warm request.
const keepWarmTimeout = 10 * time.Second

// warmNote says whether the session was kept warm.
func (e *env) warmNote() string {
	if e.Config.Timings.IdleThreshold > 0 {
		return fmt.Sprintf(", although the check sent it a request every %v", e.Config.Timings.IdleThreshold.D()/3)
	}
	return " (the profile declares no idle threshold, so the check could not keep it warm)"
}

// end marks a session the check ends itself (a DELETE it asserts on).
func (e *env) end(sid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone == nil {
		e.gone = map[string]bool{}
	}
	e.gone[sid] = true
}

func (e *env) ended(sid string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gone[sid]
}
