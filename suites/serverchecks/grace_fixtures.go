package serverchecks

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures whose sessions expire too early, too late, or on the wrong clock.
func init() {
	servers.Register(
		servers.Fixture{
			Name:      "never-expires",
			About:     "the reaper never expires an idle session (idle threshold of an hour, while the profile declares 1s)",
			Breaks:    []string{"GRACE-EXPIRES"},
			Configure: func(c *server.Config) { c.IdleThreshold = time.Hour },
		},
		servers.Fixture{
			Name:      "no-grace-period",
			About:     "an idle TTL alone: a session expires 1s after its last request, with no grace period (1ms) after it; checked with grace_period: 0s declared, only the grace checks skip",
			Breaks:    []string{"GRACE-IDLE-SURVIVES"},
			Configure: func(c *server.Config) { c.GracePeriod = time.Millisecond },
		},
		servers.Fixture{
			Name:                "short-idle-threshold",
			About:               "sessions go idle after 100ms instead of the declared 1s: one silent for 1.5s is gone",
			Breaks:              []string{"GRACE-IDLE-SURVIVES"},
			ExpiresHeldSessions: true,
			Configure: func(c *server.Config) {
				c.IdleThreshold = 100 * time.Millisecond
				c.ReaperInterval = 100 * time.Millisecond
			},
		},
		servers.Fixture{
			Name:                "fixed-lifetime",
			About:               "a session is deleted idle threshold + grace period + reaper interval (2.2s) after it was created, however busy",
			Breaks:              []string{"GRACE-ACTIVITY-RESETS", "GRACE-LIVE-STREAM", "GRACE-RECONNECT-CANCELS", "REPLAY-EVICTION"},
			ExpiresHeldSessions: true,
			Wrap:                fixedLifetime,
		},
		servers.Fixture{
			Name:   "get-not-activity",
			About:  "only POSTs count as activity: a session whose client just listens on its GET stream, or only opens GET streams, expires",
			Breaks: []string{"GRACE-ACTIVITY-RESETS", "GRACE-LIVE-STREAM"},
			Wrap:   getNotActivity,
		},
		servers.Fixture{
			Name:                "reaped-while-listening",
			About:               "only POSTs count as activity, and a session expires about 800ms after its last POST (idle 700ms, a 1ms grace period, reaper 100ms) while the profile declares idle 1s + grace 1s: a client that only listens on a GET stream for longer loses its session, a call's stream kept for resumption included",
			Breaks:              []string{"GRACE-ACTIVITY-RESETS", "GRACE-IDLE-SURVIVES", "GRACE-LIVE-STREAM"},
			ExpiresHeldSessions: true,
			Configure: func(c *server.Config) {
				c.IdleThreshold, c.GracePeriod, c.ReaperInterval = 700*time.Millisecond, time.Millisecond, 100*time.Millisecond
			},
			Wrap: getNotActivity,
		},
		servers.Fixture{
			Name:   "grace-not-cancelled",
			About:  "a grace period, once started, runs out even if the client comes back during it",
			Breaks: []string{"GRACE-RECONNECT-CANCELS"},
			Wrap:   graceNotCancelled,
		},
	)
}

// expirer deletes sessions in-process on its own clock, with the headers
// of the request that created them. Its timers only start a goroutine that
// asks due whether the session should be gone: a fake clock runs timer
// callbacks under its lock, which the server's clock calls need.
type expirer struct {
	next http.Handler
	clk  clock.WithTickerAndDelayedExecution
	// due reports, under the lock, whether a session should be gone now.
	due func(t *tracked, now time.Time) bool

	mu       sync.Mutex
	sessions map[string]*tracked
}

// tracked is one session as the middleware sees it.
type tracked struct {
	hdr        http.Header
	created    time.Time
	inflight   int       // requests the middleware counts
	lastEnd    time.Time // end of the last of them
	graceUntil time.Time // when a grace period that started runs out
}

func newExpirer(next http.Handler, cfg server.Config, due func(*tracked, time.Time) bool) *expirer {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &expirer{next: next, clk: clk, due: due, sessions: map[string]*tracked{}}
}

// serve serves r. A new session (from initialize or a recovery hint) is
// tracked from its first answer and checked after d; a request on a tracked
// session, if counted, goes through begin and, when it ends, checks the
// session after d.
func (x *expirer) serve(w http.ResponseWriter, r *http.Request, counted bool, d time.Duration, begin func(*tracked, time.Time)) {
	sid := r.Header.Get(wire.HeaderSessionID)
	hdr := servers.ClientHeaders(r.Header)
	// A session already due is gone before the request reaches it, however
	// late a busy machine runs the timer that would have deleted it; but a
	// DELETE held up by the session's stalled stream does not hold the
	// request up for long.
	done := make(chan struct{})
	go func() { x.check(sid); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	x.mu.Lock()
	t := x.sessions[sid]
	if t != nil && counted {
		begin(t, x.clk.Now())
		t.inflight++
	}
	x.mu.Unlock()
	servers.ServeWith(x.next, w, r, func(ew *servers.EventWriter) {
		ew.OnStatus = func(code int, h http.Header) int {
			if nsid := h.Get(wire.HeaderSessionID); nsid != "" && nsid != sid {
				x.mu.Lock()
				if x.sessions[nsid] == nil {
					now := x.clk.Now()
					x.sessions[nsid] = &tracked{hdr: hdr, created: now, lastEnd: now}
					x.checkAfter(d, nsid)
				}
				x.mu.Unlock()
			}
			return code
		}
	})
	if t != nil && counted {
		x.mu.Lock()
		t.inflight--
		t.lastEnd = x.clk.Now()
		x.checkAfter(d, sid)
		x.mu.Unlock()
	}
}

// checkAfter deletes the session d from now if it is due then.
func (x *expirer) checkAfter(d time.Duration, sid string) {
	x.clk.AfterFunc(d, func() { go x.check(sid) })
}

func (x *expirer) check(sid string) {
	now := x.clk.Now()
	x.mu.Lock()
	t := x.sessions[sid]
	if t == nil || !x.due(t, now) {
		x.mu.Unlock()
		return
	}
	delete(x.sessions, sid)
	x.mu.Unlock()
	servers.InProcess(x.next, http.MethodDelete, sid, t.hdr, "")
}

func fixedLifetime(next http.Handler, cfg server.Config) http.Handler {
	life := cfg.IdleThreshold + cfg.GracePeriod + cfg.ReaperInterval
	x := newExpirer(next, cfg, func(t *tracked, now time.Time) bool { return !now.Before(t.created.Add(life)) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.serve(w, r, false, life, nil)
	})
}

// getNotActivity expires a session idle threshold + grace period + reaper
// interval after its last POST, however long its GET stream has been open.
func getNotActivity(next http.Handler, cfg server.Config) http.Handler {
	limit := cfg.IdleThreshold + cfg.GracePeriod + cfg.ReaperInterval
	x := newExpirer(next, cfg, func(t *tracked, now time.Time) bool {
		return t.inflight == 0 && !now.Before(t.lastEnd.Add(limit))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.serve(w, r, r.Method == http.MethodPost, limit, func(*tracked, time.Time) {})
	})
}

// graceNotCancelled starts a grace period when a session has been idle for
// the idle threshold, and deletes the session when it runs out, whatever
// happens meanwhile.
func graceNotCancelled(next http.Handler, cfg server.Config) http.Handler {
	idle, grace := cfg.IdleThreshold, cfg.GracePeriod
	x := newExpirer(next, cfg, func(t *tracked, now time.Time) bool {
		if !t.graceUntil.IsZero() {
			return !now.Before(t.graceUntil)
		}
		return t.inflight == 0 && !now.Before(t.lastEnd.Add(idle+grace))
	})
	// A request after the idle threshold finds the grace period running,
	// and leaves it so.
	begin := func(t *tracked, now time.Time) {
		if t.inflight == 0 && t.graceUntil.IsZero() && !now.Before(t.lastEnd.Add(idle)) {
			t.graceUntil = t.lastEnd.Add(idle + grace)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x.serve(w, r, true, idle+grace, begin)
	})
}
