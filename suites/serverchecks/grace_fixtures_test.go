package serverchecks

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

// Timings of the fixtures' configuration.
var (
	idle   = servers.Config().IdleThreshold
	grace  = servers.Config().GracePeriod
	reaper = servers.Config().ReaperInterval
)

// gone waits until sid gets 404 (the fixtures delete in the background).
func (tg *fixtureServer) gone(sid string) {
	tg.t.Helper()
	tg.waitUntil("session "+sid+" to be gone", func() bool { return tg.status(tg.c, sid) == http.StatusNotFound })
}

func TestNeverExpires(t *testing.T) {
	t.Parallel()
	tg := serve(t, "never-expires", fakeClock)
	sid := tg.connect(tg.c)
	for range 5 {
		tg.clock.Step(idle + grace + reaper)
		tg.srv.Reap()
	}
	if got := tg.srv.SessionCount(); got != 1 {
		t.Fatalf("%d sessions after five idle + grace periods of silence, want 1", got)
	}
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list: HTTP %d", got)
	}
}

func TestNoGracePeriod(t *testing.T) {
	t.Parallel()
	tg := serve(t, "no-grace-period", fakeClock)
	sid := tg.connect(tg.c)
	tg.clock.Step(time.Second + time.Millisecond) // the idle threshold passed
	tg.srv.Reap()
	tg.clock.Step(time.Millisecond) // the whole grace period
	if got := tg.status(tg.c, sid); got != http.StatusNotFound {
		t.Fatalf("just past the idle threshold: HTTP %d, want 404", got)
	}
}

func TestShortIdleThreshold(t *testing.T) {
	t.Parallel()
	tg := serve(t, "short-idle-threshold", fakeClock)
	sid := tg.connect(tg.c)
	tg.clock.Step(101 * time.Millisecond) // idle threshold (100ms) passed
	tg.srv.Reap()
	tg.clock.Step(grace)
	if got := tg.status(tg.c, sid); got != http.StatusNotFound {
		t.Fatalf("after %v of silence: HTTP %d, want 404", 101*time.Millisecond+grace, got)
	}
}

func TestFixedLifetime(t *testing.T) {
	t.Parallel()
	tg := serve(t, "fixed-lifetime", fakeClock)
	sid := tg.connect(tg.c)
	life := idle + grace + reaper
	for elapsed := time.Duration(0); elapsed+idle/2 < life; elapsed += idle / 2 {
		tg.clock.Step(idle / 2)
		if got := tg.status(tg.c, sid); got != http.StatusOK {
			t.Fatalf("in use at %v: HTTP %d", elapsed+idle/2, got)
		}
	}
	tg.clock.Step(idle / 2)
	tg.gone(sid)
}

// listening serves fixture name on a fake clock, with a session whose
// standalone GET stream is open.
func listening(t *testing.T, name string) (tg *fixtureServer, sid string, get *stream) {
	tg = serve(t, name, fakeClock)
	sid = tg.connect(tg.c)
	get = tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	return tg, sid, get
}

func TestGETNotActivity(t *testing.T) {
	t.Parallel()
	tg, sid, get := listening(t, "get-not-activity")
	tg.clock.Step(idle + grace + reaper)
	tg.waitUntil("the GET stream to end", get.Ended)
	tg.gone(sid)
}

// TestReapedWhileListening: a POST every 500ms keeps the session, a GET
// stream open for 800ms after the last one does not.
func TestReapedWhileListening(t *testing.T) {
	t.Parallel()
	tg, sid, get := listening(t, "reaped-while-listening")
	for range 3 {
		tg.clock.Step(500 * time.Millisecond)
		if got := tg.status(tg.c, sid); got != http.StatusOK {
			t.Fatalf("a POST 500ms after the last: HTTP %d, want 200", got)
		}
	}
	tg.clock.Step(700 * time.Millisecond)
	if get.Ended() {
		t.Fatal("the GET stream ended 700ms after the last POST")
	}
	tg.clock.Step(200 * time.Millisecond)
	tg.waitUntil("the GET stream to end", get.Ended)
	tg.gone(sid)
}

func TestGraceNotCancelled(t *testing.T) {
	t.Parallel()
	tg := serve(t, "grace-not-cancelled", fakeClock)
	sid := tg.connect(tg.c)
	tg.clock.Step(idle + grace/2) // in the grace period
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("during the grace period: HTTP %d, want 200", got)
	}
	tg.clock.Step(grace / 2)
	tg.gone(sid)
}
