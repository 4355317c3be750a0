package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// getReplaceTimeout bounds how long a new standalone GET waits for the one it
// replaces to let go of the go-sdk stream.
const getReplaceTimeout = 5 * time.Second

// ServeHTTP implements http.Handler for the MCP endpoint. Everything that
// decides which session and transport a request belongs to happens here;
// the go-sdk handler of the session's current generation does the rest.
//
// Its frame, serveGET's and serveStandalone's stay on the stack of every
// standalone GET for as long as it is open, so the vetting and the error
// answers live in functions that return first (admit, writeRPCError): a
// few hundred bytes more there and the runtime can no longer halve the
// stack of each idle GET, 8 KiB per session.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	principal, id, ok := s.admit(w, r)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodPost:
		// Last-Event-ID resumes GET streams; on a POST it means nothing,
		// and no revision forbids it: ignored, where the go-sdk would
		// refuse the request with 400.
		r.Header.Del(headerLastEventID)
		s.servePOST(w, r, principal, id)
	case http.MethodGet:
		s.serveGET(w, r, principal, id)
	case http.MethodDelete:
		s.serveDELETE(w, r, principal, id)
	}
}

// admit vets a request's origin, method, credentials, protocol version and
// session id header, and returns its principal and session id (""
// without). If it reports false, the request has been answered: with an
// error, or by the sessionless revision.
//
//go:noinline
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (principal, id string, ok bool) {
	if err := s.checkOrigin(r); err != nil {
		writeRPCError(w, http.StatusForbidden, CodeInvalidRequest, "Forbidden: "+err.Error(), nil)
		return "", "", false
	}
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, CodeInvalidRequest, "Method not allowed: use POST, GET or DELETE", nil)
		return "", "", false
	}
	r.Header.Del(headerPOSTToken) // only the server sets it
	principal, err := s.principal(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-conform"`)
		writeRPCError(w, http.StatusUnauthorized, CodeInvalidRequest, "Unauthorized: "+err.Error(), nil)
		return "", "", false
	}
	if s.answersSessionless(r) {
		s.serveModern(w, r, principal)
		return "", "", false
	}
	if err := checkProtocolVersion(r, s.cfg.legacy); err != nil {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+err.Error(), nil)
		return "", "", false
	}
	id = r.Header.Get(headerSessionID)
	if n := len(r.Header.Values(headerSessionID)); n > 1 {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("Bad Request: %d %s headers, want one", n, headerSessionID), nil)
		return "", "", false
	} else if n == 1 {
		if err := checkSessionID(id); err != nil || id == "" {
			if err == nil {
				err = fmt.Errorf("empty %s", headerSessionID)
			}
			writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+err.Error(), nil)
			return "", "", false
		}
	}
	return principal, id, true
}

func (s *Server) servePOST(w http.ResponseWriter, r *http.Request, principal, id string) {
	if !isJSON(r.Header.Get("Content-Type")) {
		writeRPCError(w, http.StatusUnsupportedMediaType, CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json", nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, CodeInvalidRequest, fmt.Sprintf("Request body larger than %d bytes", tooBig.Limit), nil)
			return
		}
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: reading body: "+err.Error(), nil)
		return
	}
	init, rpcID, batch, calls, err := peek(body)
	if err != nil {
		writePeekError(w, err)
		return
	}
	if err := s.checkBatch(batch); err != nil {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+err.Error(), nil)
		return
	}
	if err := checkIDs(rpcID, batch); err != nil {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		return
	}
	r.Body = newBody(body)
	ctx := withRequests(r.Context(), batch)

	if id == "" {
		if !init {
			writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required (only initialize may omit it)", nil)
			return
		}
		s.initializeNew(ctx, w, r, principal, rpcID)
		return
	}
	sess, gen, ok := s.enter(w, r, principal, id)
	if !ok {
		return
	}
	defer s.ended(sess)
	defer gen.release()
	if s.shared && s.storeDown() && s.needsStore(body) {
		writeStoreUnavailable(w, fmt.Errorf("%w: the call needs what it keeps", store.ErrUnavailable), rpcID)
		return
	}
	if m, ok := taskRequest(body); ok && !init {
		// Its writes are not the session's: a tasks/result waiting when the
		// session ends answers why rather than being cut (see serveTask).
		dw, release := s.bindDetached(w, sess)
		defer release()
		s.serveTask(ctx, dw, sess, m)
		return
	}
	var dw *deadlineWriter
	var cancel context.CancelFunc
	var release func()
	if calls == 0 && !init {
		dw, release = s.bindBrief(w, sess) // it waits for nothing
	} else {
		dw, ctx, cancel, release = s.bind(w, ctx, sess)
	}
	defer release()
	dw.errs.id = rpcID
	if init {
		s.reinitialize(dw, r.WithContext(ctx), sess)
		return
	}
	useNegotiatedVersion(r, gen)
	if calls == 0 {
		gen.handler.ServeHTTP(dw, r.WithContext(ctx))
		return
	}
	// The POST carries its stream until it returns, or until a GET resuming
	// the stream ends it (see carry): ending the request ends it.
	p, car := sess.openPOST(gen, calls, cancel)
	if s.shared {
		sess.setCallIDs(p, callIDs(rpcID, batch))
	}
	status := 0
	cw := &commitWriter{ResponseWriter: dw, onCommit: func(code int) { status = code }}
	r.Header.Set(headerPOSTToken, p.tok)
	gen.handler.ServeHTTP(cw, r.WithContext(context.WithValue(ctx, postKey{}, p)))
	sess.closePOST(p, car, status)
}

func (s *Server) serveGET(w http.ResponseWriter, r *http.Request, principal, id string) {
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: GET requires an Mcp-Session-Id header", nil)
		return
	}
	sess, gen, ok := s.enter(w, r, principal, id)
	if !ok {
		return
	}
	defer s.ended(sess)
	defer gen.release()
	dw, ctx, _, release := s.bind(w, r.Context(), sess)
	defer release()
	r = r.WithContext(ctx)
	useNegotiatedVersion(r, gen)
	last := r.Header.Get(keyLastEventID)
	index := 0
	if last != "" {
		var done bool
		if index, done = s.resumeGET(w, dw, r, sess, gen, last); done {
			return
		}
	}
	if s.shared {
		s.followStandalone(dw, r, sess, last, index)
		return
	}
	s.serveStandalone(dw, r, sess, gen, last, index)
}

// resumeGET checks a GET's Last-Event-ID, last. A POST stream's resume it
// serves, and an id it cannot resume from it answers: then it reports
// done. Otherwise last is the standalone stream's, at index.
//
//go:noinline
func (s *Server) resumeGET(w http.ResponseWriter, dw *deadlineWriter, r *http.Request, sess *session, gen *generation, last string) (index int, done bool) {
	stream, index, err := parseEventID(last)
	if err != nil {
		writeReplayError(w, "malformed_event_id", err.Error())
		return 0, true
	}
	if stream != "" && sess.isTorn(stream) {
		writeResumeError(w, last, store.ErrNotStored)
		return 0, true
	}
	if err := s.events.Check(sess.id, stream, index); err != nil {
		writeResumeError(w, last, err)
		return 0, true
	}
	if stream == "" {
		return index, false
	}
	if s.shared && sess.postOfStream(stream) == nil {
		s.followPOST(dw, r, sess, stream, index)
		return 0, true
	}
	s.resumePOST(dw, r, sess, gen, stream)
	return 0, true
}

// writeResumeError answers a Last-Event-ID the event store cannot resume from.
func writeResumeError(w http.ResponseWriter, last string, err error) {
	if unavailable(err) {
		writeStoreUnavailable(w, err, nil)
		return
	}
	reason := "unknown_event_id"
	switch {
	case errors.Is(err, eventstore.ErrEvicted):
		reason = "events_evicted"
	case errors.Is(err, store.ErrNotStored):
		reason = "events_not_stored"
	}
	writeReplayError(w, reason, fmt.Sprintf("cannot resume after %s %q: %v; open a GET without %s for new messages", headerLastEventID, last, err, headerLastEventID))
}

// primingVersion is the first protocol revision with priming events; the
// go-sdk primes POST streams from it on, and so does the standalone stream.
const primingVersion = "2025-11-25"

// serveStandalone serves the standalone GET stream, resuming after event
// index if last (its Last-Event-ID) is set. A new GET always takes over
// (never 409): the previous one, dead or alive, is closed first.
//
// The server replays this stream itself: once the go-sdk commits to 200, the
// stream opens with a priming event (SSE-PRIMING) and the backlog from
// Prime, and the go-sdk continues after the priming event, the newest one.
// The go-sdk could not replay a backlog that precedes its cursor, and it
// numbers replayed events by counting only non-empty ones, so a stored
// priming event inside its replay would shift every id after it.
func (s *Server) serveStandalone(w *deadlineWriter, r *http.Request, sess *session, gen *generation, last string, index int) {
	sw, end := s.startStandalone(w, r, sess, last, index)
	defer end()
	if sw != nil {
		gen.handler.ServeHTTP(sw, r)
	}
}

// startStandalone opens the standalone stream for serveStandalone: its
// writer, primed, for the go-sdk; nil when the request has been answered.
// end undoes it.
//
//go:noinline
func (s *Server) startStandalone(w *deadlineWriter, r *http.Request, sess *session, last string, index int) (sw *streamWriter, end func()) {
	_, cancel, sw, done := s.openStandalone(w, r, sess)
	// Held notifications are the standalone stream's now, and part of the
	// backlog read next (see deliver).
	fresh := last == ""
	sess.flushToStandalone(fresh)
	if fresh {
		// A fresh GET gets what no client was sent yet, not the whole
		// history; what was evicted meanwhile is skipped, not refused.
		index = sess.resumeIndex()
	}
	if !fresh {
		// Before the backlog is read: a resume waiting for this GET must
		// not replay what the backlog has.
		sess.acked()
	}
	p, ok := s.prime(w, r, sess, sw, last, index, fresh)
	if !ok {
		return nil, done
	}
	r.Header.Set(keyLastEventID, fmt.Sprintf("_%d", p.Index))
	if s.cfg.SSEKeepAlive <= 0 {
		return sw, done
	}
	stop := s.startKeepAlive(cancel, sw, sess)
	return sw, func() { stop(); done() }
}

// prime appends the standalone stream's priming event and sets what sw
// opens with: that event, then the backlog after index. If it reports
// false, the error has been answered.
func (s *Server) prime(w http.ResponseWriter, r *http.Request, sess *session, sw *streamWriter, last string, index int, fresh bool) (eventstore.Priming, bool) {
	p, err := s.events.Prime(sess.id, "", index, fresh)
	switch {
	case err == nil:
	case unavailable(err):
		writeStoreUnavailable(w, err, nil)
		return p, false
	case fresh: // no history at all: the session has just been removed
		s.writeSessionGone(w)
		return p, false
	default:
		writeResumeError(w, last, err)
		return p, false
	}
	primingID := ""
	if revisionAtLeast(r.Header.Get(headerProtocolVersion), primingVersion) {
		primingID = fmt.Sprintf("_%d", p.Index)
	}
	sw.open(primingID, sess.unreplayed(p.Backlog))
	return p, true
}

// openStandalone registers a new standalone GET of sess, its writer sw and
// cancel, after ending the one it replaces; done deregisters it. The
// stream runs in the request's context, which bind made cancellable (dw's
// onDead): a context of its own would cost every idle GET another few
// hundred bytes.
func (s *Server) openStandalone(dw *deadlineWriter, r *http.Request, sess *session) (context.Context, context.CancelFunc, *streamWriter, func()) {
	cancel := dw.onDead
	sw := &streamWriter{ResponseWriter: dw, onEvent: sess.markDelivered}
	cur, old := sess.attachGET(cancel, sw)
	s.takeOver(sess, old)
	return r.Context(), cancel, sw, func() {
		sess.detachGET(cur)
		sw.finish()
		cancel()
	}
}

// takeOver ends old, the GET stream a new one replaces, and waits (bounded)
// for it to let go.
func (s *Server) takeOver(sess *session, old *getStream) {
	if old == nil {
		return
	}
	old.close(s.cfg.SSERetry)
	select {
	case <-old.done:
	case <-time.After(getReplaceTimeout):
		s.log.Warn("replaced GET stream did not let go in time", "session", sess.id)
	}
	s.log.Info("session GET stream replaced", "session", sess.id)
}

// keepAlive runs startKeepAlive's comments until ctx ends.
func (s *Server) keepAlive(ctx context.Context, cancel context.CancelFunc, sw *streamWriter, sess *session) {
	stop := s.startKeepAlive(cancel, sw, sess)
	<-ctx.Done()
	stop()
}

// startKeepAlive writes a comment every SSEKeepAlive so middleboxes keep
// the stream and a dead peer is found: a failed write ends the stream
// (cancel), and with it the session's claim to be active
// (GRACE-LIVE-STREAM). It runs on a timer rather than a goroutine of its
// own: a storm holds thousands of quiet streams. stop waits for a comment
// being written.
func (s *Server) startKeepAlive(cancel context.CancelFunc, sw *streamWriter, sess *session) (stop func()) {
	ka := &keepAliver{s: s, cancel: cancel, sw: sw, sess: sess}
	ka.mu.Lock()
	defer ka.mu.Unlock()
	ka.schedule()
	return ka.stop
}

type keepAliver struct {
	s      *Server
	cancel context.CancelFunc
	sw     *streamWriter
	sess   *session

	mu      sync.Mutex
	t       clock.Timer
	stopped bool
}

// schedule arms the next comment; ka.mu is held. The timer's function
// only starts a goroutine: a fake clock runs it with its lock held.
func (ka *keepAliver) schedule() {
	ka.t = ka.s.cfg.Clock.AfterFunc(ka.s.cfg.SSEKeepAlive, func() { go ka.fire() })
}

func (ka *keepAliver) fire() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if ka.stopped {
		return
	}
	if err := ka.sw.comment("keep-alive"); err != nil {
		ka.s.log.Info("session GET stream dead", "session", ka.sess.id, "err", err)
		ka.stopped = true
		ka.cancel()
		return
	}
	ka.schedule()
}

func (ka *keepAliver) stop() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	ka.stopped = true
	ka.t.Stop()
}

func (s *Server) serveDELETE(w http.ResponseWriter, r *http.Request, principal, id string) {
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: DELETE requires an Mcp-Session-Id header", nil)
		return
	}
	sess, gen, ok := s.enter(w, r, principal, id)
	if !ok {
		return
	}
	defer s.ended(sess)
	defer gen.release()
	if s.shared {
		// Ended on every replica, or on none: an outage keeps it.
		if _, err := s.store.Remove(r.Context(), sess.id); unavailable(err) {
			writeStoreUnavailable(w, err, nil)
			return
		}
	}
	if !s.remove(sess, "deleted", nil) && s.shared {
		s.events.Forget(sess.id) // the removal's own news removed it here first
	}
	w.WriteHeader(http.StatusNoContent)
}

// enter finds the session for id, records the request's activity and
// returns the generation to serve it, acquired: the caller releases it. If
// it reports false, the answer (404, 403, recovery hint) has been written.
func (s *Server) enter(w http.ResponseWriter, r *http.Request, principal, id string) (*session, *generation, bool) {
	sess := s.lookup(id)
	if sess == nil && s.shared {
		var err error
		if sess, err = s.adopt(id); err != nil {
			writeStoreUnavailable(w, err, nil) // not 404: the session may be alive
			return nil, nil, false
		}
	}
	if sess == nil {
		s.answerUnknown(w, r, principal, id)
		return nil, nil, false
	}
	if sess.principal != principal {
		// RECREATE-OWNER-ONLY: refuse without touching the session.
		writeRPCError(w, http.StatusForbidden, CodeInvalidRequest, "Forbidden: session belongs to another principal", nil)
		return nil, nil, false
	}
	if s.shared && !s.touchShared(sess, r.Method) {
		s.answerUnknown(w, r, principal, id)
		return nil, nil, false
	}
	gen, cancelledGrace, ok := sess.begin(s.cfg.Clock.Now())
	if !ok {
		s.answerUnknown(w, r, principal, id)
		return nil, nil, false
	}
	if cancelledGrace {
		s.log.Info("session grace cancelled", "session", sess.id, "by", r.Method)
	}
	if gen, ok = sess.acquire(gen); !ok {
		s.ended(sess)
		s.answerUnknown(w, r, principal, id)
		return nil, nil, false
	}
	return sess, gen, true
}

// answerUnknown answers a request whose session id is unknown or expired.
func (s *Server) answerUnknown(w http.ResponseWriter, r *http.Request, principal, id string) {
	// Only an id of our form gets a recovery session; it counts against
	// the same per-client limits as an initialize.
	if s.cfg.RecoveryHint && r.Method != http.MethodDelete && looksIssued(id) {
		newID, err := s.recover(r, principal, id)
		if err != nil {
			s.log.Warn("session recovery failed", "stale", id, "err", err)
		} else {
			w.Header().Set(headerSessionID, newID)
		}
	}
	s.writeSessionGone(w)
}

// initializeNew starts a session; ctx is the request's context with the
// values the go-sdk's handling needs (see withRequests). The session enters
// the table before the go-sdk writes the InitializeResult, so the client's
// next request finds it.
func (s *Server) initializeNew(ctx context.Context, w http.ResponseWriter, r *http.Request, principal string, rpcID json.RawMessage) {
	sess, err := s.create(principal, s.clientAddr(r))
	if err != nil {
		writeCreateError(w, err)
		return
	}
	gen, _, _ := sess.begin(s.cfg.Clock.Now())
	defer s.ended(sess)
	dw, release := s.bindBrief(w, sess)
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	dw.errs.id = rpcID
	gen.handler.ServeHTTP(dw, r.WithContext(ctx))
	// Not serverSession: the client has the InitializeResult before
	// ServeHTTP returns, and a re-initialize of the session may have
	// replaced and closed gen meanwhile.
	if !gen.initializeSucceeded() {
		// The go-sdk's own refusal (an Accept without text/event-stream,
		// say) is the answer: released before the session that never was
		// is removed, it is not taken for an answer the removal lost.
		released = true
		release()
		s.remove(sess, "dropped: initialize failed", nil)
		return
	}
	s.saveShared(sess, gen)
	if s.log.Enabled(context.Background(), slog.LevelInfo) { // the arguments cost allocations even when off
		s.log.Info("session created", "session", sess.id, "principal", principal)
	}
}

// reinitialize recreates the transport of a live session (RECREATE-*): a new
// generation answers the initialize with a real InitializeResult under the
// same id, and takes over the moment it commits to success, before the
// client can see the response. The generation it replaced, whichever that
// is when several re-initialize at once, is retired: it closes once its
// calls are answered.
func (s *Server) reinitialize(w http.ResponseWriter, r *http.Request, sess *session) {
	g := s.newGeneration(sess)
	if !g.acquire() {
		// The session was removed meanwhile. Its removal killed w's writes:
		// an answer written through w would be a status line without its
		// body. release answers why instead (answerLost).
		if !sess.isGone() {
			s.writeSessionGone(w)
		}
		return
	}
	defer g.release()
	r.Header.Del(headerSessionID) // the go-sdk creates a session only for an initialize without id
	var prev *generation
	cw := &commitWriter{ResponseWriter: w, onCommit: func(status int) {
		if status != http.StatusOK {
			return
		}
		prev = sess.replace(g)
		// The old transport's GET stream is stale: the client opens a new one.
		sess.dropGET(s.cfg.SSERetry)
	}}
	g.handler.ServeHTTP(cw, r)
	if g.serverSession() == nil || prev == nil {
		if prev != nil && sess.restore(g, prev) {
			prev = nil
		}
		g.retire()
	}
	if prev != nil {
		prev.retire()
	}
	if sess.isGone() {
		g.shutdown() // removed while the go-sdk was creating its session
		return
	}
	if g.serverSession() != nil {
		s.saveShared(sess, g)
		s.log.Info("session re-initialized", "session", sess.id)
	}
}

// isJSON reports a media type of application/json, with any parameters.
// The plain form, what clients send, needs no parsing (nor its garbage).
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// commitWriter calls onCommit with the status once, when the response is
// committed (the first WriteHeader or Write).
type commitWriter struct {
	http.ResponseWriter
	onCommit  func(status int)
	committed bool
}

func (c *commitWriter) WriteHeader(status int) {
	c.commit(status)
	c.ResponseWriter.WriteHeader(status)
}

func (c *commitWriter) Write(p []byte) (int, error) {
	c.commit(http.StatusOK)
	return c.ResponseWriter.Write(p)
}

func (c *commitWriter) commit(status int) {
	if !c.committed {
		c.committed = true
		c.onCommit(status)
	}
}

// Unwrap lets http.ResponseController reach Flush on the real writer.
func (c *commitWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
