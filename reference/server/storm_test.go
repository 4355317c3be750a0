package server_test

import (
	"errors"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestResumePrimesAtOnce: a GET resuming the POST stream of a call still
// running answers 200 with a priming event (the Last-Event-ID it resumes
// from) before the call sends anything more, after a real TCP cut.
func TestResumePrimesAtOnce(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 3)
	e.step()
	last := next(t, post, 2)[1].ID // step 1
	c := e.refresh()
	get := e.openGET(c, sid, "") // takes the next notifications: the resume has none to replay
	resumed := e.openStream(c, sid, last)
	primed := make(chan error, 1)
	go func() {
		ev, err := resumed.Next()
		if err == nil && (ev.ID != last || ev.Data != "") {
			t.Errorf("first event of the resume: %+v, want a priming event with id %q", ev, last)
		}
		primed <- err
	}()
	select {
	case err := <-primed:
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
	case <-time.After(5 * time.Second): // the fake clock holds step 2 back
		t.Fatal("the resume sent no priming event while the call ran")
	}
	e.step()
	e.step()
	onResumed := messages(t, resumed)
	e.do(c, http.MethodDelete, sid, nil)
	onGET := messages(t, get)
	// Which stream carries steps 2 and 3 depends on whether they come
	// before the resume has taken the stream over (then it takes them and
	// what follows, see resumed) or after (then the GET connected before
	// it keeps them); either way each comes once, in order, and the result
	// on the resumed stream.
	got := describe(t, onGET) + " | " + describe(t, onResumed)
	want := []string{
		"progress II, log step 2 of 3, progress III, log step 3 of 3 | result completed 3 steps",
		" | progress II, log step 2 of 3, progress III, log step 3 of 3, result completed 3 steps",
	}
	if !slices.Contains(want, got) {
		t.Fatalf("GET | resumed: %q, want one of %q", got, want)
	}
}

// TestDeadGETReplayedOnce: notifications written to a standalone GET whose
// connection then turns out dead are not lost: a new standalone GET that
// presents the last event id the client read on the old one gets every
// later notification exactly once, those written to the dead connection
// first.
func TestDeadGETReplayedOnce(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 4)
	e.step()
	seen := next(t, post, 2) // step 1 on the POST stream
	c := e.refresh()
	old := e.openGET(c, sid, "")
	e.step()
	onOld := next(t, old, 2) // step 2, redirected to the GET
	lastGET := onOld[1].ID
	// Step 3 is written to the GET connection; the client never reads it
	// before the connection is reset.
	e.step()
	eventually(t, "step 4's timer", e.clock.HasWaiters)
	c = e.refresh()
	get := e.openGET(c, sid, lastGET)
	e.step()
	resumed := e.openStream(c, sid, seen[1].ID)
	onResumed := messages(t, resumed)
	e.do(c, http.MethodDelete, sid, nil)
	onGET := messages(t, get)
	all := append(append(append(seen, onOld...), onGET...), onResumed...)
	if got := describe(t, all); got != allFourSteps {
		t.Fatalf("client saw %q (old GET %s; new GET %s; resumed %s), want %q",
			got, describe(t, onOld), describe(t, onGET), describe(t, onResumed), allFourSteps)
	}
}

// TestUnflushedNotDelivered: an event written to a standalone GET whose
// connection turns out dead when the event is flushed (the client reset it;
// the server has not noticed yet) was not sent: a fresh GET gets it.
func TestUnflushedNotDelivered(t *testing.T) {
	var deaf deafener
	e := newEnvListener(t, noKeepAlive, deaf.wrap)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 3)
	e.step()
	seen := next(t, post, 2) // step 1
	c := e.refresh()
	e.openGET(c, sid, "")
	deaf.deafen() // the GET's connection: every write fails from now on
	e.step()      // step 2 goes to the GET stream, and fails there
	eventually(t, "step 3's timer", e.clock.HasWaiters)
	c = e.refresh()
	get := e.openGET(c, sid, "")
	e.step()
	resumed := e.openStream(c, sid, seen[1].ID)
	onResumed := messages(t, resumed)
	e.do(c, http.MethodDelete, sid, nil)
	onGET := messages(t, get)
	all := append(append(seen, onGET...), onResumed...)
	if got, want := describe(t, all), "progress I, log step 1 of 3, progress II, log step 2 of 3, progress III, log step 3 of 3, result completed 3 steps"; got != want {
		t.Fatalf("client saw %q (new GET %s; resumed %s), want %q", got, describe(t, onGET), describe(t, onResumed), want)
	}
}

// deafener wraps the server's listener; deafen makes every write on the
// connections accepted so far fail, as on a connection the client reset.
type deafener struct {
	mu    sync.Mutex
	conns []*deafConn
}

func (d *deafener) wrap(ln net.Listener) net.Listener { return &deafListener{ln, d} }

func (d *deafener) deafen() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.deaf.Store(true)
	}
}

type deafListener struct {
	net.Listener
	d *deafener
}

func (l *deafListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &deafConn{Conn: c}
	l.d.mu.Lock()
	l.d.conns = append(l.d.conns, dc)
	l.d.mu.Unlock()
	return dc, nil
}

type deafConn struct {
	net.Conn
	deaf atomic.Bool
}

func (c *deafConn) Write(p []byte) (int, error) {
	if c.deaf.Load() {
		return 0, errors.New("connection reset by peer")
	}
	return c.Conn.Write(p)
}
