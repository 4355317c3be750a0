package toxics

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

// checkCut reads the end of a stream that should have been cut: a clean
// close (EOF, or unexpected EOF inside the chunked body), not a timeout and
// not a reset.
func checkCut(t *testing.T, c *client) {
	t.Helper()
	got, err := c.event(wait)
	if err == nil {
		t.Fatalf("event %q after the cut", got)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("end of a cut stream: err = %v, want EOF", err)
	}
}

func TestCutAfter(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	if err := p.CutAfter(0); err == nil {
		t.Fatal("CutAfter(0) accepted")
	}

	// A plain response on the same connection first: its body looks like
	// SSE but is not a stream, and it must not count.
	c := dial(t, p.Addr())
	c.get(t, "/hello")
	if b, err := io.ReadAll(c.body); err != nil || len(b) == 0 {
		t.Fatalf("/hello: %q, %v", b, err)
	}
	c.get(t, "/stream")
	s := u.next(t)
	s.mustWrite(t, ": hi\n\ndata: one\n\n")
	s.mustWrite(t, "data: two\r\n\r\n")
	c.mustEvent(t, "one")
	c.mustEvent(t, "two")

	if err := p.CutAfter(3); err != nil {
		t.Fatal(err)
	}
	// Events split across writes, comments in between, both line endings.
	for _, w := range []string{
		": keep-alive\n\n",
		"id: 3\nda", "ta: three\n", "\n",
		": keep-alive\r\n\r\n",
		"event: e\r\ndata: four\r\n\r",
		"\n",
		": a\n: b\n\n",
		"data: five\n\ndata: six\n\n",
	} {
		s.write(t, w) // fails once the cut reaches the server
	}
	for _, want := range []string{"three", "four", "five"} {
		c.mustEvent(t, want)
	}
	checkCut(t, c)
	s.waitGone(t)

	// One shot: the next stream is not cut.
	c2, s2 := openStream(t, p.Addr(), u)
	for i := range 6 {
		s2.mustWrite(t, fmt.Sprintf(": ka\n\ndata: %d\n\n", i))
		c2.mustEvent(t, fmt.Sprint(i))
	}
	s2.mustWrite(t, "")
	if _, err := c2.event(wait); err != io.EOF {
		t.Fatalf("end of an uncut stream: err = %v, want EOF", err)
	}
}

// TestCutAfterFirstStream checks that only the first stream to carry n
// events is cut, whichever it is.
func TestCutAfterFirstStream(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	a, sa := openStream(t, p.Addr(), u)
	b, sb := openStream(t, p.Addr(), u)
	if err := p.CutAfter(2); err != nil {
		t.Fatal(err)
	}
	sa.mustWrite(t, "data: a1\n\n")
	a.mustEvent(t, "a1")
	sb.mustWrite(t, "data: b1\n\n")
	b.mustEvent(t, "b1")
	sb.write(t, "data: b2\n\ndata: b3\n\n")
	b.mustEvent(t, "b2")
	checkCut(t, b)
	for i := 2; i < 6; i++ {
		sa.mustWrite(t, fmt.Sprintf("data: a%d\n\n", i))
		a.mustEvent(t, fmt.Sprintf("a%d", i))
	}
}

// TestCutAfterTimeline checks that a second CutAfter replaces a pending one
// and starts a new count, that an event arriving in pieces is counted
// when its blank line passes, and that CutAfterFunc reports the cut when
// the stream is closed, not when armed.
func TestCutAfterTimeline(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	c, s := openStream(t, p.Addr(), u)
	first, second := make(chan struct{}), make(chan struct{})
	if err := p.CutAfterFunc(5, func() { close(first) }); err != nil {
		t.Fatal(err)
	}
	s.mustWrite(t, "data: 1\n\ndata: 2\n")
	c.mustEvent(t, "1")
	if err := p.CutAfterFunc(1, func() { close(second) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
		t.Fatal("the cut was reported when armed, before any event passed")
	default:
	}
	s.write(t, "\ndata: 3\n\n")
	c.mustEvent(t, "2")
	checkCut(t, c)
	// The cut is reported once the stream is closed; the replaced
	// order never is.
	select {
	case <-second:
	case <-time.After(wait):
		t.Fatal("the cut was not reported")
	}
	select {
	case <-first:
		t.Fatal("a replaced CutAfter reported a cut")
	default:
	}
}

// TestCutAfterReset checks that on a WithReset proxy the cut is a reset.
func TestCutAfterReset(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u, WithReset())
	c, s := openStream(t, p.Addr(), u)
	if err := p.CutAfter(1); err != nil {
		t.Fatal(err)
	}
	s.write(t, "data: 1\n\ndata: 2\n\n")
	// The event may or may not be read before the reset discards it.
	_, err := c.event(wait)
	if err == nil {
		_, err = c.event(wait)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("cut on a WithReset proxy: err = %v, want ECONNRESET", err)
	}
}
