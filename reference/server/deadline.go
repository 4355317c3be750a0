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
type deadlineWriter struct {
	http.ResponseWriter
	timeout time.Duration
	onDead  func()
	errs    *jsonErrors // the writer below, which holds back plain-text errors
	dead    atomic.Bool
	writing atomic.Int32 // writes and flushes in progress
	once    sync.Once
	// rc controls the writer below; bind sets it once, rather than each
	// write and flush making its own.
	rc *http.ResponseController
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	rc, err := d.begin()
	if err != nil {
		return 0, err
	}
	defer d.writing.Add(-1)
	n, err := d.ResponseWriter.Write(p)
	d.settle(rc, err)
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
	d.settle(rc, err)
	return err
}

// begin arms the deadline of a write unless the response is dead. A kill
// racing it either sees the write in progress and aborts it, or is seen
// here after the deadline was armed.
func (d *deadlineWriter) begin() (*http.ResponseController, error) {
	d.writing.Add(1)
	if d.dead.Load() {
		d.writing.Add(-1)
		return nil, errStreamDead
	}
	rc := d.arm()
	if d.dead.Load() {
		rc.SetWriteDeadline(time.Now())
	}
	return rc, nil
}

// Unwrap exposes the real writer to http.ResponseController.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

func (d *deadlineWriter) arm() *http.ResponseController {
	rc := d.rc
	if rc == nil {
		rc = http.NewResponseController(d.ResponseWriter)
	}
	rc.SetWriteDeadline(time.Now().Add(d.timeout)) // the network runs on real time
	return rc
}

func (d *deadlineWriter) settle(rc *http.ResponseController, err error) {
	if err != nil {
		d.markDead()
		return
	}
	rc.SetWriteDeadline(time.Time{}) // an idle stream is not a stalled one
}

// kill marks the response dead and makes a write in progress fail now. With
// none in progress the connection is left alone, so a stream that was
// closed cleanly (a retry hint, then the end) still ends cleanly.
func (d *deadlineWriter) kill() {
	d.markDead()
	if d.writing.Load() > 0 {
		http.NewResponseController(d.ResponseWriter).SetWriteDeadline(time.Now())
	}
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
// shutdown end the session's streams). The caller must call release when
// the request is done.
func (s *Server) bind(w http.ResponseWriter, r *http.Request, sess *session) (dw *deadlineWriter, br *http.Request, release func()) {
	s.serving.Add(1)
	ctx, cancel := context.WithCancel(r.Context())
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
	stop := context.AfterFunc(sess.ctx, dw.kill)
	return dw, r.WithContext(ctx), func() { stop(); cancel(); je.finish(); s.serving.Add(-1) }
}
