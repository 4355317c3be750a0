package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// closeWait bounds how long closing a stream waits for a write in progress
// before it aborts the connection: a healthy write takes microseconds, so
// one still running after this is stalled on a client that stopped reading.
const closeWait = time.Second

// errStreamDead refuses writes once a write to the client stalled or failed.
var errStreamDead = errors.New("stream dead: a write to the client stalled or failed")

// deadlineWriter bounds every write and flush of a response by timeout. The
// go-sdk writes events while holding its stream lock, so a client that
// stops reading would otherwise wedge the stream, and every request that
// needs it, for ever. The first failure marks the response dead: later
// writes fail at once and onDead ends the request. The go-sdk stores each
// event before writing it, so what a dead stream missed stays replayable.
//
// Setting a connection's deadline is not free (a runtime timer is moved),
// and a message is a write and a flush: so a deadline is left armed after
// a write, re-armed only when less than timeout - timeout/rearmEvery of it
// is left, and cleared once, when the request ends (done). A write waits at
// most timeout either way, and at least timeout - timeout/rearmEvery.
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
	onDead  func()
	errs    *jsonErrors // the writer below, which holds back plain-text errors
	dead    atomic.Bool
	writing atomic.Int32 // writes and flushes in progress
	once    sync.Once
	// abortMu orders a kill's delayed abort (see kill) with done, so the
	// abort never reaches a connection that has moved on to another request.
	abortMu  sync.Mutex
	released bool
	// rc controls the writer below; bind sets it once, rather than each
	// write and flush making its own.
	rc *http.ResponseController
	// armedUntil is the deadline armed last, as time since deadlineEpoch
	// (monotonic); 0 when none is armed.
	armedUntil atomic.Int64
	// prev, next and enlisted place it in its session's bound list, under
	// the session's bmu.
	prev, next *deadlineWriter
	enlisted   bool
}

// rearmEvery: a deadline is re-armed once timeout/rearmEvery of it has
// passed. At 4 a stream notifying every 100 ms under the default 10 s
// timeout moves its connection's timer every 2.5 s, not every message
// (moving it was 2% of the reference's CPU in a refresh storm), and a
// stalled write still fails within 75-100% of the timeout.
const rearmEvery = 4

// deadlineEpoch is the origin of armedUntil's monotonic clock.
var deadlineEpoch = time.Now()

func (d *deadlineWriter) Write(p []byte) (int, error) {
	_, err := d.begin()
	if err != nil {
		return 0, err
	}
	defer d.writing.Add(-1)
	n, err := d.ResponseWriter.Write(p)
	d.settle(err)
	return n, err
}

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	rc, err := d.begin()
	if err != nil {
		return err
	}
	defer d.writing.Add(-1)
	err = rc.Flush()
	d.settle(err)
	return err
}

// begin arms the deadline of a write unless the response is dead. A kill
// racing it either is seen here or sees the write in progress, which it
// lets finish (see kill): aborting a write cuts the response wherever it
// is, its status line included.
func (d *deadlineWriter) begin() (*http.ResponseController, error) {
	d.writing.Add(1)
	if d.dead.Load() {
		d.writing.Add(-1)
		return nil, errStreamDead
	}
	return d.arm(), nil
}

// Unwrap exposes the real writer to http.ResponseController.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

func (d *deadlineWriter) arm() *http.ResponseController {
	rc := d.controller()
	now := time.Now() // the network runs on real time
	at := now.Sub(deadlineEpoch)
	if left := time.Duration(d.armedUntil.Load()) - at; left > d.timeout-d.timeout/rearmEvery {
		return rc // armed a moment ago
	}
	rc.SetWriteDeadline(now.Add(d.timeout))
	d.armedUntil.Store(int64(at + d.timeout))
	return rc
}

func (d *deadlineWriter) controller() *http.ResponseController {
	if d.rc == nil {
		return http.NewResponseController(d.ResponseWriter)
	}
	return d.rc
}

func (d *deadlineWriter) settle(err error) {
	if err != nil {
		d.markDead()
	}
}

// done clears an armed deadline when the request ends: the connection may
// serve more requests, and an idle stream is not a stalled one.
func (d *deadlineWriter) done() {
	d.abortMu.Lock()
	d.released = true
	d.abortMu.Unlock()
	if d.armedUntil.Swap(0) != 0 {
		d.controller().SetWriteDeadline(time.Time{})
	}
}

// kill marks the response dead: later writes fail at once. A write in
// progress is given closeWait to finish before it is aborted: a healthy one
// takes microseconds, and aborting it at once could cut a response's status
// line or its last event, leaving the client a closed connection where an
// answer that says why was due (see answerLost). With none in progress the
// connection is left alone, so a stream that was closed cleanly (a retry
// hint, then the end) still ends cleanly.
func (d *deadlineWriter) kill() {
	d.markDead()
	if d.writing.Load() > 0 {
		time.AfterFunc(closeWait, d.abort)
	}
}

// abort makes a write still in progress fail now, unless the request has
// ended.
func (d *deadlineWriter) abort() {
	d.abortMu.Lock()
	defer d.abortMu.Unlock()
	if d.released || d.writing.Load() == 0 {
		return
	}
	d.controller().SetWriteDeadline(time.Now())
	d.armedUntil.Store(-1) // armed, in the past
}

func (d *deadlineWriter) markDead() {
	d.dead.Store(true)
	d.once.Do(func() {
		if d.onDead != nil {
			d.onDead()
		}
	})
}

// Serving reports how many requests a transport is serving, streams
// included, whether or not their session is still in the table.
func (s *Server) Serving() int { return int(s.serving.Load()) }

// bind prepares a request of sess for the go-sdk: its writes get deadlines,
// and it ends when a write stalls or the session is removed (DELETE, expiry,
// shutdown end the session's streams). It returns the writer, the context
// to run the request with (a child of parent, the request's context with any
// values it needs), the cancel that ends it, and release, which the caller
// must call when the request is done.
func (s *Server) bind(w http.ResponseWriter, parent context.Context, sess *session) (*deadlineWriter, context.Context, context.CancelFunc, func()) {
	ctx, cancel := context.WithCancel(parent)
	dw, release := s.bindWriter(w, sess, cancel, true)
	return dw, ctx, cancel, release
}

// bindBrief is bind for a request that waits for nothing: an initialize, or
// a POST of notifications and responses, which the go-sdk answers at once.
// A stalled write or the session's end fails its writes, which is all it
// takes to end it; it runs with parent, saving a context per request.
func (s *Server) bindBrief(w http.ResponseWriter, sess *session) (*deadlineWriter, func()) {
	return s.bindWriter(w, sess, nil, true)
}

// bindDetached is bindBrief for a request that outlives its session's end
// on purpose, to say why its wait ended (see serveTask): the session's
// removal does not kill its writes.
func (s *Server) bindDetached(w http.ResponseWriter, sess *session) (*deadlineWriter, func()) {
	return s.bindWriter(w, sess, nil, false)
}

// bindWriter makes the writers of a request, enlisted in sess (killed at
// its end) if enlist is set; cancel, if any, ends the request when a write
// fails and when it is released.
func (s *Server) bindWriter(w http.ResponseWriter, sess *session, cancel context.CancelFunc, enlist bool) (*deadlineWriter, func()) {
	s.serving.Add(1)
	// One allocation for the writers of a request, rather than one each.
	b := &struct {
		dw deadlineWriter
		je jsonErrors
		rc http.ResponseController
	}{}
	b.je.ResponseWriter = w
	b.rc = *http.NewResponseController(&b.je)
	b.dw = deadlineWriter{ResponseWriter: &b.je, timeout: s.cfg.WriteTimeout, onDead: cancel, errs: &b.je, rc: &b.rc}
	dw, je := &b.dw, &b.je
	if enlist {
		sess.enlist(dw)
	}
	return dw, func() {
		sess.delist(dw)
		if cancel != nil {
			cancel()
		}
		if enlist && !je.answered && sess.isGone() {
			s.answerLost(je, sess)
		}
		je.finish()
		dw.done()
		s.serving.Add(-1)
	}
}
