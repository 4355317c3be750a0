package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// A refresh resets the POST stream and the standalone GET a moment apart.
// These tests cut them one at a time with real TCP connections: the POST's
// client and the GET's client dial through their own trackers.

// splitEnv is an env whose call runs on post's connections and whose
// standalone GET on get's, so that each can be cut alone.
type splitEnv struct {
	*env
	deaf      *deafener
	post, get *nettest.ConnTracker
	sid       string
}

func newSplitEnv(t *testing.T, cfg server.Config) *splitEnv {
	t.Helper()
	var deaf deafener
	cfg.SSEKeepAlive = -1
	e := newEnvListener(t, cfg, deaf.wrap)
	return &splitEnv{env: e, deaf: &deaf, post: &nettest.ConnTracker{}, get: &nettest.ConnTracker{}, sid: e.connect(e.c)}
}

// on returns a client dialling through ct.
func (e *splitEnv) on(ct *nettest.ConnTracker) *wire.Client {
	c := wire.New(e.url)
	c.HTTP = &http.Client{Transport: &http.Transport{DialContext: ct.Dial}}
	e.t.Cleanup(c.HTTP.CloseIdleConnections)
	return c
}

// cut resets ct's connections and waits until the server serves only want
// requests.
func (e *splitEnv) cut(ct *nettest.ConnTracker, want int) {
	e.t.Helper()
	ct.CutAll()
	eventually(e.t, "the server to notice the cut", func() bool { return e.srv.InFlight() == want })
}

// start opens the GET, starts a 4-step call and reads step 1 on its POST
// stream; it returns the GET's priming event id, and what the POST stream
// carried.
func (e *splitEnv) start() (getID string, get *wire.Stream, seen []sse.Event) {
	e.t.Helper()
	get, prime := e.openPrimed(e.on(e.get), e.sid, "")
	post := e.startLongOperation(e.on(e.post), e.sid, 4)
	e.step()
	return prime.ID, get, next(e.t, post, 2)
}

// deadGET brings the session to where a refresh leaves it when the GET's
// reset is noticed after the POST's: the POST stream is cut, step 2 is
// written to the GET's connection, which the client has reset, and then
// the GET is found cut too. It returns the GET's last event id (its
// priming event's) and what the POST stream carried.
func (e *splitEnv) deadGET() (getID string, seen []sse.Event) {
	e.t.Helper()
	getID, _, seen = e.start()
	e.cut(e.post, 1) // the GET stays
	e.deaf.deafen()  // the client has reset the GET; the server has not noticed
	e.step()         // step 2 goes to the GET, and never reaches the client
	eventually(e.t, "step 3's timer", e.clock.HasWaiters)
	e.cut(e.get, 0)
	return getID, seen
}

// resumeToEnd resumes the call's stream after last, runs steps 3 and 4, and
// returns what the resumed stream carried and, once the session is
// deleted, what get did.
func (e *splitEnv) resumeToEnd(last string, get *wire.Stream) (onResumed, onGET []sse.Event) {
	e.t.Helper()
	c := e.client()
	resumed := e.openStream(c, e.sid, last)
	e.step()
	e.step()
	onResumed = messages(e.t, resumed)
	e.do(c, http.MethodDelete, e.sid, nil)
	return onResumed, messages(e.t, get)
}

// exactlyOnce checks that the events, in the order the client read them,
// are the 4 steps and the result, each once.
func exactlyOnce(t *testing.T, evs []sse.Event, detail string) {
	t.Helper()
	if got := describe(t, evs); got != allFourSteps {
		t.Fatalf("client saw %q (%s), want %q", got, detail, allFourSteps)
	}
}

// TestDeadGETResumeOnly: a client that resumes only the POST stream gets
// the notifications written to a GET that turned out dead, on the resumed
// stream, in order, before the rest and the result, once the resume has
// waited in vain for a GET to settle them; the resume is primed at once.
func TestDeadGETResumeOnly(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: -1, ResumeGETWait: 200 * time.Millisecond})
	_, seen := e.deadGET()
	e.step() // step 3, held: nothing is connected
	eventually(t, "step 4's timer", e.clock.HasWaiters)
	resumed, prime := e.openPrimed(e.client(), e.sid, seen[1].ID)
	if prime.ID != seen[1].ID {
		t.Fatalf("priming event id %q, want %q", prime.ID, seen[1].ID)
	}
	e.step()
	onResumed := messages(t, resumed)
	exactlyOnce(t, append(seen, onResumed...), "resumed: "+describe(t, onResumed))
}

// TestDeadGETReconnectedFirst: the GET reconnects with the Last-Event-ID it
// read, then the POST stream is resumed: the GET replays what the dead one
// was sent, and the resume, which would wait 10 s for such a GET, does not
// and sends only the rest.
func TestDeadGETReconnectedFirst(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: -1, ResumeGETWait: 10 * time.Second})
	getID, seen := e.deadGET()
	c := e.client()
	get := e.openGET(c, e.sid, getID)
	e.step()
	resumed := e.openStream(c, e.sid, seen[1].ID)
	e.step()
	began := time.Now()
	onResumed := messages(t, resumed)
	if waited := time.Since(began); waited > 5*time.Second {
		t.Fatalf("the resume waited %v for a GET that had come", waited)
	}
	e.do(c, http.MethodDelete, e.sid, nil)
	onGET := messages(t, get)
	exactlyOnce(t, append(append(seen, onGET...), onResumed...), "GET: "+describe(t, onGET)+"; resumed: "+describe(t, onResumed))
}

// TestDeadGETResumedFirst: the POST stream is resumed first; the resume is
// primed at once and waits for the GET, which reconnects with its
// Last-Event-ID and replays what the dead one was sent. The resume then
// sends what was held meanwhile (and what the server held once it noticed
// the dead GET), the rest and the result; nothing twice.
func TestDeadGETResumedFirst(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: -1, ResumeGETWait: 10 * time.Second})
	getID, seen := e.deadGET()
	c := e.client()
	resumed, _ := e.openPrimed(c, e.sid, seen[1].ID) // primed while it waits
	e.step()                                         // step 3: held for the resume
	eventually(t, "step 4's timer", e.clock.HasWaiters)
	get := e.openGET(c, e.sid, getID)
	e.step()
	onResumed := messages(t, resumed)
	e.do(c, http.MethodDelete, e.sid, nil)
	onGET := messages(t, get)
	exactlyOnce(t, append(append(seen, onGET...), onResumed...), "GET: "+describe(t, onGET)+"; resumed: "+describe(t, onResumed))
}

// TestLiveGETKeepsRedirected: only the POST stream is cut; the GET, alive,
// takes the call's notifications once the redirect delay has passed, and
// the resume does not replay them.
func TestLiveGETKeepsRedirected(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: 50 * time.Millisecond, ResumeGETWait: 10 * time.Second})
	_, get, seen := e.start()
	e.cut(e.post, 1)
	e.step()
	onGET := next(t, get, 2) // step 2, once the delay has passed
	onResumed, rest := e.resumeToEnd(seen[1].ID, get)
	onGET = append(onGET, rest...)
	if got, want := describe(t, onGET)+" | "+describe(t, onResumed),
		"progress II, log step 2 of 4, progress III, log step 3 of 4, progress IIII, log step 4 of 4 | result completed 4 steps"; got != want {
		t.Fatalf("GET | resumed: %q, want %q", got, want)
	}
}

// TestResumeWithinRedirectDelay: a POST stream resumed before the redirect
// delay has passed gets the notifications held meanwhile, though a GET is
// connected; the GET gets none of them.
func TestResumeWithinRedirectDelay(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: time.Hour})
	_, get, seen := e.start()
	e.cut(e.post, 1)
	e.step() // step 2: held, the GET is not used yet
	eventually(t, "step 3's timer", e.clock.HasWaiters)
	onResumed, onGET := e.resumeToEnd(seen[1].ID, get)
	if len(onGET) > 0 {
		t.Fatalf("the GET got %s", describe(t, onGET))
	}
	exactlyOnce(t, append(seen, onResumed...), "resumed: "+describe(t, onResumed))
}

// TestDeadGETReconnectedAfterWait: the resume waited in vain and replayed
// what the dead GET was sent; a GET that then reconnects with the
// Last-Event-ID it read leaves those out of its replay.
func TestDeadGETReconnectedAfterWait(t *testing.T) {
	e := newSplitEnv(t, server.Config{RedirectDelay: -1, ResumeGETWait: 50 * time.Millisecond})
	getID, seen := e.deadGET()
	c := e.client()
	resumed, _ := e.openPrimed(c, e.sid, seen[1].ID)
	e.step()
	early := next(t, resumed, 4)
	if got := describe(t, early); got != "progress II, log step 2 of 4, progress III, log step 3 of 4" {
		t.Fatalf("resumed: %q, want steps 2 and 3", got)
	}
	get := e.openGET(c, e.sid, getID)
	e.step()
	onResumed := append(early, messages(t, resumed)...)
	e.do(c, http.MethodDelete, e.sid, nil)
	if onGET := messages(t, get); len(onGET) > 0 {
		t.Fatalf("the GET replayed %s", describe(t, onGET))
	}
	exactlyOnce(t, append(seen, onResumed...), "resumed: "+describe(t, onResumed))
}
