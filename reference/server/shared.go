package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// Serving a session from a shared store (store.Store.Shared): any replica
// serves any request of any session.
//
//   - A replica that does not know a session id loads its record and
//     rebuilds the go-sdk transport in-process from the stored initialize
//     params (adopt), as a recovery hint does, before serving the request.
//   - Every request touches the record; the reaper of every replica starts
//     grace periods and expires sessions in the store, whose scripts decide
//     each expiry once; every replica drops its copy when told (watchGone).
//   - Notifications are never held in one process: a call's notifications
//     go to a standalone GET held by any replica, else onto its own stream.
//   - Standalone GETs and resumes of streams opened elsewhere are served
//     from the store: the backlog, then live events as they are appended
//     (followStandalone, followPOST).

// Reasons for a removal that leaves the store alone: another replica (or the
// store's expiry) already removed the session.
const (
	reasonGoneElsewhere = "removed on another replica"
	reasonExpiredShared = "expired"
)

// errStore is answered with 503: the shared store failed.
var errStore = store.ErrUnavailable

// localOnly reports whether a removal for reason leaves the store alone.
func localOnly(reason string) bool {
	return reason == reasonGoneElsewhere || reason == reasonExpiredShared
}

// listening reports whether a standalone GET of the session is connected,
// on any replica.
func (s *session) listening() bool {
	if s.getAttached() {
		return true
	}
	if !s.shared {
		return false
	}
	ok, _ := s.st.Listening(context.Background(), s.id)
	return ok
}

// adopt rebuilds a session this replica does not hold from its stored record,
// or returns nil if the store has none. An error means the store could not
// say: the session may well be alive.
func (s *Server) adopt(id string) (*session, error) {
	rec, ok, err := s.store.Load(context.Background(), id)
	if err != nil {
		s.log.Warn("session store lookup failed", "session", id, "err", err)
		if !unavailable(err) {
			err = fmt.Errorf("%w: %v", store.ErrUnavailable, err)
		}
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	sess := s.newSession(id, rec.Principal)
	gen := s.newGeneration(sess)
	sess.gen = gen
	version := rec.Version
	if version == "" {
		version = "2025-03-26"
	}
	params := rec.Init
	if len(params) == 0 || !json.Valid(params) {
		params = fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcp-conform-adopted","version":%q}}`, version, Version)
	}
	drop := func(why string) *session {
		s.log.Warn("session adoption failed", "session", id, "why", why)
		sess.close()
		sess.closeGenerations()
		return nil
	}
	if code := s.inProcess(gen, "", version, fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}`, params)); code != http.StatusOK || gen.serverSession() == nil {
		return drop(fmt.Sprintf("in-process initialize answered %d", code)), nil
	}
	if code := s.inProcess(gen, id, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		return drop(fmt.Sprintf("in-process initialized notification answered %d", code)), nil
	}
	s.mu.Lock()
	if cur := s.sessions[id]; cur != nil { // adopted by a concurrent request
		s.mu.Unlock()
		drop("adopted concurrently")
		return cur, nil
	}
	s.sessions[id] = sess
	if rec.Principal != "" {
		s.perPrincipal[rec.Principal]++
	}
	s.mu.Unlock()
	s.log.Info("session adopted from the store", "session", id)
	return sess, nil
}

// saveShared stores what another replica needs to adopt the session: the
// negotiated version and the client's initialize params.
func (s *Server) saveShared(sess *session, g *generation) {
	if !s.shared {
		return
	}
	ss := g.serverSession()
	if ss == nil {
		return
	}
	init, err := json.Marshal(ss.InitializeParams())
	if err != nil {
		init = nil
	}
	rec := store.Session{ID: sess.id, Principal: sess.principal, Version: g.negotiated(), Init: init}
	if err := s.store.Save(context.Background(), rec); err != nil {
		s.log.Warn("saving session record failed", "session", sess.id, "err", err)
	}
}

// touchShared records a request's activity in the store. It reports false
// if the session has left the table, and drops this replica's copy.
func (s *Server) touchShared(sess *session, method string) bool {
	cancelled, err := s.store.Touch(context.Background(), sess.id, s.cfg.Clock.Now())
	switch {
	case errors.Is(err, store.ErrGone):
		s.remove(sess, reasonGoneElsewhere, nil)
		return false
	case err != nil:
		// Serve from what this replica holds; the next touch records it.
		s.log.Warn("session store touch failed", "session", sess.id, "err", err)
	case cancelled:
		s.log.Info("session grace cancelled", "session", sess.id, "by", method)
	}
	return true
}

// reapShared is the reaper on a shared store. Requests in flight here (a
// connected GET included) count as activity for every replica; the store
// starts grace periods and hands each expired session to one replica.
func (s *Server) reapShared() {
	now := s.cfg.Clock.Now()
	ctx := context.Background()
	s.mu.Lock()
	var busy []string
	all := make([]*session, 0, len(s.sessions))
	for id, sess := range s.sessions {
		all = append(all, sess)
		sess.mu.Lock()
		if sess.inflight > 0 {
			busy = append(busy, id)
		}
		sess.mu.Unlock()
	}
	s.mu.Unlock()
	for _, id := range busy {
		s.store.Touch(ctx, id, now)
	}
	// A call runs on after its stream is cut: its lease too.
	for _, sess := range all {
		sess.renewLeases(ctx)
	}
	if s.settling() {
		// Activity of the outage is not all recorded yet: no grace
		// period starts and no session expires on stale activity.
		return
	}
	started, err := s.store.StartGrace(ctx, now.Add(-s.cfg.IdleThreshold), now.Add(s.cfg.GracePeriod))
	if err != nil {
		s.log.Warn("starting grace periods failed", "err", err)
	}
	for _, id := range started {
		s.log.Info("session grace started", "session", id, "expires_in", s.cfg.GracePeriod)
	}
	expired, err := s.store.Expire(ctx, now)
	if err != nil {
		s.log.Warn("expiring sessions failed", "err", err)
	}
	for _, id := range expired {
		// This replica won the expiry: it frees what the session held.
		s.events.Forget(id)
		if n := s.jobs.CancelSession(id, now); n > 0 {
			s.log.Info("session jobs cancelled", "session", id, "jobs", n)
		}
		if sess := s.lookup(id); sess != nil {
			s.remove(sess, reasonExpiredShared, nil)
		} else {
			s.log.Info("session "+reasonExpiredShared, "session", id)
		}
	}
}

// watchGone drops this replica's copy of every session removed elsewhere.
func (s *Server) watchGone(ctx context.Context) {
	for id := range s.store.Gone(ctx) {
		if sess := s.lookup(id); sess != nil {
			s.remove(sess, reasonGoneElsewhere, nil)
		}
	}
}

// followStandalone serves the standalone GET from the store: the priming
// event, the backlog after the resume point, then every event appended on
// any replica. Subscribing before priming makes each event arrive once.
func (s *Server) followStandalone(w *deadlineWriter, r *http.Request, sess *session, last string, index int) {
	ctx, cancel, sw, done := s.openStandalone(w, r, sess)
	defer done()
	// Counted only if the count went up: an outage must not leave it low.
	counted := s.store.Listen(ctx, sess.id, 1) == nil
	defer func() {
		bg := context.Background()
		if counted {
			s.store.Listen(bg, sess.id, -1)
		}
		s.store.Delivered(bg, sess.id, sess.resumeIndex())
	}()
	live, err := s.store.Follow(ctx, sess.id, "")
	if err != nil {
		writeStoreUnavailable(w, err, nil)
		return
	}
	fresh := last == ""
	sess.flushToStandalone(fresh)
	if fresh {
		n, _ := s.store.LastDelivered(ctx, sess.id)
		index = max(n, sess.resumeIndex())
	}
	setSSEHeaders(w)
	p, ok := s.prime(w, r, sess, sw, last, index, fresh)
	if !ok {
		return
	}
	sw.WriteHeader(http.StatusOK)
	// The opening goes out now, not with the first live event.
	if http.NewResponseController(sw).Flush() != nil {
		return
	}
	if s.cfg.SSEKeepAlive > 0 {
		done := make(chan struct{})
		defer func() { cancel(); <-done }()
		go func() { defer close(done); s.keepAlive(ctx, cancel, sw, sess) }()
	}
	sent := p.Index
	for {
		select {
		case <-ctx.Done():
			return
		case <-sess.ctx.Done():
			return
		case ev, ok := <-live:
			if !ok {
				return
			}
			if ev.Index <= sent {
				continue
			}
			if writeMessageEvent(sw, "", ev.Index, ev.Data) != nil {
				return
			}
			if http.NewResponseController(sw).Flush() != nil {
				return
			}
			sent = ev.Index
		}
	}
}

// followPOST serves a GET resuming a POST stream that another replica
// opened: what was stored after index, then what is appended, until the
// stream's responses have all been sent.
func (s *Server) followPOST(w http.ResponseWriter, r *http.Request, sess *session, stream string, index int) {
	ctx := r.Context()
	live, err := s.store.Follow(ctx, sess.id, stream)
	if err != nil {
		writeStoreUnavailable(w, err, nil)
		return
	}
	backlog, err := s.store.Replay(ctx, sess.id, stream, index)
	if err != nil {
		writeResumeError(w, fmt.Sprintf("%s_%d", stream, index), err)
		return
	}
	want := s.store.Requests(ctx, sess.id, stream)
	primingID := ""
	if revisionAtLeast(r.Header.Get(headerProtocolVersion), primingVersion) {
		primingID = r.Header.Get(keyLastEventID)
	}
	w = openSSE(w, primingID)
	rc := http.NewResponseController(w)
	sent := index
	answered := map[string]bool{}
	write := func(ix int, data []byte) bool {
		if ix <= sent {
			return true
		}
		if writeMessageEvent(w, stream, ix, data) != nil {
			return false
		}
		sent = ix
		if eventstore.IsResponse(data) {
			answered[responseID(data)] = true
		}
		return rc.Flush() == nil
	}
	for _, ev := range backlog {
		if !write(ev.Index, ev.Data) {
			return
		}
	}
	check := s.cfg.Clock.NewTicker(s.cfg.ReaperInterval)
	defer check.Stop()
	for len(answered) < want {
		select {
		case <-ctx.Done():
			return
		case <-sess.ctx.Done():
			return
		case ev, ok := <-live:
			if !ok || !write(ev.Index, ev.Data) {
				return
			}
		case <-check.C():
			if !s.reportLost(ctx, sess, stream, sent, answered, write) {
				return
			}
		}
	}
}

// reportLost answers the calls of a stream whose replica stopped renewing
// its lease (it was killed) with an error that names the job/resume path,
// once for all replicas: appended to the stream, it reaches every follower.
// It reports false if the stream cannot be finished (no call ids known).
func (s *Server) reportLost(ctx context.Context, sess *session, stream string, sent int, answered map[string]bool, write func(int, []byte) bool) bool {
	if s.settling() {
		return true // the lease may have lapsed only in the outage
	}
	held, ids, err := s.store.Leased(ctx, sess.id, stream)
	if err != nil || held {
		return true
	}
	// The response may have been stored just before the lease lapsed.
	evs, err := s.store.Replay(ctx, sess.id, stream, sent)
	if err != nil {
		return true
	}
	for _, ev := range evs {
		if !write(ev.Index, ev.Data) {
			return false
		}
	}
	lost := unanswered(ids, answered)
	if len(lost) == 0 {
		return len(ids) > 0
	}
	if won, err := s.store.Claim(ctx, "lost:"+sess.id+":"+stream, s.cfg.EventMaxAge); err != nil || !won {
		return true // another replica reports them; they come as live events
	}
	s.log.Warn("calls lost with the replica running them", "session", sess.id, "stream", stream, "calls", len(lost))
	for _, id := range lost {
		s.events.Append(ctx, sess.id, stream, lostResponse(id))
	}
	return true
}

// codeInternal is JSON-RPC's internal error.
const codeInternal = -32603

// lostResponse is the error a call gets when the replica running it died:
// its work is gone; the resume hint names the tool that continues it.
func lostResponse(id json.RawMessage) []byte {
	hint := referenceResumeHint
	data, _ := json.Marshal(rpcErrorResponse{
		JSONRPC: "2.0",
		Error: rpcError{Code: codeInternal, Message: "The replica running this request stopped before answering; its work is lost",
			Data: expiredData{Reason: "replica_lost", Resume: &hint}},
		ID: id,
	})
	return data
}

// responseID is the id of a JSON-RPC response, as idKey gives it: the
// go-sdk spells an id its own way (a string unescaped), not as the
// request did.
func responseID(data []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(data, &m)
	k, _ := idKey(m.ID)
	return k
}

// unanswered are the call ids with no response among answered (keys of
// responseID), matched by value.
func unanswered(ids []json.RawMessage, answered map[string]bool) []json.RawMessage {
	var out []json.RawMessage
	for _, id := range ids {
		if k, ok := idKey(id); !ok || !answered[k] {
			out = append(out, id)
		}
	}
	return out
}

// leaseTTL is how long a call's lease lasts without renewal: five reaper
// intervals, at least 2 s, so a busy replica is not taken for a dead one.
func leaseTTL(reaper time.Duration) time.Duration { return max(5*reaper, 2*time.Second) }

// setCallIDs records the JSON-RPC ids of p's calls.
func (s *session) setCallIDs(p *post, ids []json.RawMessage) {
	s.dmu.Lock()
	p.ids = ids
	s.dmu.Unlock()
}

// callIDs are the ids of the requests among a POST's messages.
func callIDs(id json.RawMessage, batch []json.RawMessage) []json.RawMessage {
	if batch == nil {
		if len(id) == 0 || string(id) == "null" {
			return nil
		}
		return []json.RawMessage{id}
	}
	var out []json.RawMessage
	for _, raw := range batch {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
			out = append(out, m.ID)
		}
	}
	return out
}

// leaseCalls takes the lease of a POST stream whose calls run here.
func (s *session) leaseCalls(ctx context.Context, stream string, ids []json.RawMessage) {
	if s.shared && len(ids) > 0 {
		s.st.Lease(context.WithoutCancel(ctx), s.id, stream, ids, s.lease)
	}
}

// renewLeases renews the leases of the calls running here.
func (s *session) renewLeases(ctx context.Context) {
	type lease struct {
		stream string
		ids    []json.RawMessage
	}
	var all []lease
	s.dmu.Lock()
	for _, p := range s.posts {
		if p.calls > 0 && p.streamID != "" && len(p.ids) > 0 {
			all = append(all, lease{p.streamID, p.ids})
		}
	}
	s.dmu.Unlock()
	for _, l := range all {
		s.st.Lease(ctx, s.id, l.stream, l.ids, s.lease)
	}
}

// jobMirror is where a shared store keeps jobs; nil without one.
func jobMirror(st store.Store) jobs.Mirror {
	if st == nil {
		return nil
	}
	return st.Jobs()
}

// setSSEHeaders are the headers of an SSE response, as the go-sdk sends them.
func setSSEHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
}
