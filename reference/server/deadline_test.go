package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// stuckWriter is a ResponseWriter whose writes block, as on a connection
// whose peer stopped reading, until the write deadline passes.
type stuckWriter struct {
	*httptest.ResponseRecorder
	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed and replaced by every SetWriteDeadline
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{ResponseRecorder: httptest.NewRecorder(), changed: make(chan struct{})}
}

func (s *stuckWriter) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	for {
		s.mu.Lock()
		d, changed := s.deadline, s.changed
		s.mu.Unlock()
		var expired <-chan time.Time
		if !d.IsZero() {
			t := time.NewTimer(time.Until(d))
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-expired:
			return 0, os.ErrDeadlineExceeded
		case <-changed:
		}
	}
}

func (s *stuckWriter) FlushError() error { return nil }

// TestDeadlineWriterStall: a stalled write fails at the write timeout, the
// stream is dead from then on, and onDead runs once.
func TestDeadlineWriterStall(t *testing.T) {
	dead := 0
	d := &deadlineWriter{ResponseWriter: newStuckWriter(), timeout: 50 * time.Millisecond, onDead: func() { dead++ }}
	if _, err := d.Write([]byte("data: x\n\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled write: %v", err)
	}
	if _, err := d.Write([]byte("data: y\n\n")); !errors.Is(err, errStreamDead) {
		t.Fatalf("write after the stall: %v", err)
	}
	if err := http.NewResponseController(d).Flush(); !errors.Is(err, errStreamDead) {
		t.Fatalf("flush after the stall: %v", err)
	}
	if dead != 1 {
		t.Fatalf("onDead ran %d times", dead)
	}
}

// TestCloseAbortsStalledWrite: closing a GET stream whose event write is
// stalled (the go-sdk holds the writer's lock meanwhile) does not wait for
// the write timeout: the write is aborted and close returns.
func TestCloseAbortsStalledWrite(t *testing.T) {
	sw := &streamWriter{ResponseWriter: &deadlineWriter{ResponseWriter: newStuckWriter(), timeout: time.Hour}}
	sw.WriteHeader(http.StatusOK)
	wrote := make(chan error, 1)
	go func() {
		_, err := sw.Write([]byte("event: message\nid: _1\ndata: {}\n\n"))
		wrote <- err
	}()
	cancelled := make(chan struct{})
	g := &getStream{w: sw, cancel: func() { close(cancelled) }}
	closed := make(chan struct{})
	go func() { g.close(time.Second); close(closed) }()
	for _, ch := range []<-chan struct{}{closed, cancelled} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("close is blocked by the stalled write")
		}
	}
	if err := <-wrote; err == nil {
		t.Fatal("the stalled write succeeded")
	}
	if err := sw.comment("keep-alive"); err != nil && !errors.Is(err, errStreamDead) {
		t.Fatalf("keep-alive after close: %v", err)
	}
}

// deadlineCounter is a ResponseWriter that records its write deadlines.
type deadlineCounter struct {
	*httptest.ResponseRecorder
	set  int
	last time.Time
}

func (c *deadlineCounter) SetWriteDeadline(t time.Time) error {
	c.set++
	c.last = t
	return nil
}

func (c *deadlineCounter) FlushError() error { return nil }

// TestDeadlineArmedOnce: a message (a write, then a flush) arms the
// connection's deadline once, not once per call plus a clearing each; a
// deadline older than timeout/rearmEvery is armed again; the end of the
// request clears it.
func TestDeadlineArmedOnce(t *testing.T) {
	c := &deadlineCounter{ResponseRecorder: httptest.NewRecorder()}
	d := &deadlineWriter{ResponseWriter: c, timeout: time.Minute}
	message := func() {
		t.Helper()
		if _, err := d.Write([]byte("data: x\n\n")); err != nil {
			t.Fatal(err)
		}
		if err := d.FlushError(); err != nil {
			t.Fatal(err)
		}
	}
	message()
	message()
	if c.set != 1 || time.Until(c.last) < time.Minute-time.Second {
		t.Fatalf("two messages set the deadline %d times (last %v from now), want once, a minute ahead", c.set, time.Until(c.last))
	}
	// Armed long enough ago that less than timeout - timeout/rearmEvery is left.
	d.armedUntil.Store(int64(time.Since(deadlineEpoch) + time.Minute - time.Minute/rearmEvery - time.Millisecond))
	message()
	if c.set != 2 {
		t.Fatalf("a deadline with less than %v left was not armed again", time.Minute-time.Minute/rearmEvery)
	}
	d.done()
	if c.set != 3 || !c.last.IsZero() {
		t.Fatalf("the end of the request left the deadline at %v", c.last)
	}
	d.done()
	if c.set != 3 {
		t.Fatal("a second done set the deadline again")
	}
}

// TestSessionEndsEnlistedWriters: closing a session kills the writers of
// its requests still enlisted, not those that left, and one enlisted after
// the close at once.
func TestSessionEndsEnlistedWriters(t *testing.T) {
	sess := newSession("s", "p", clock.RealClock{}, time.Minute)
	writers := make([]*deadlineWriter, 3)
	for i := range writers {
		writers[i] = &deadlineWriter{ResponseWriter: httptest.NewRecorder(), timeout: time.Minute}
		sess.enlist(writers[i])
	}
	sess.delist(writers[1])
	sess.delist(writers[1]) // twice is harmless
	sess.close()
	for i, want := range []bool{true, false, true} {
		if got := writers[i].dead.Load(); got != want {
			t.Errorf("writer %d dead = %v, want %v", i, got, want)
		}
	}
	late := &deadlineWriter{ResponseWriter: httptest.NewRecorder(), timeout: time.Minute}
	sess.enlist(late)
	if !late.dead.Load() {
		t.Error("a writer enlisted after the close is alive")
	}
	sess.delist(late)
}
