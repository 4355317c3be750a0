package server

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// session is one entry of the session table. It outlives the go-sdk
// transports serving it: a re-initialize swaps in a new generation while the
// application state (the counter, the event history) stays.
type session struct {
	id        string
	principal string
	hintKey   string // set when the session was created by a recovery hint

	st     store.Store   // holds the counter (counter_increment state)
	shared bool          // st is shared with other replicas
	lease  time.Duration // how long a call's lease outlives its last renewal (shared.go)
	calls  atomic.Int64  // tools/call requests running (see callLimit)
	// ctx ends when the session leaves the table; its requests, streams and
	// tool work end with it.
	ctx    context.Context
	cancel context.CancelFunc // close calls it
	// bound are the writers of the session's requests (bind), killed when
	// it ends: a list through them rather than a context.AfterFunc per
	// request, whose context and map entry a parked GET kept alive.
	bmu   sync.Mutex
	bound *deadlineWriter
	ended bool

	mu           sync.Mutex
	gen          *generation
	lastActivity time.Time
	inflight     int        // HTTP requests being served, a connected GET included
	inGrace      bool       // the grace period runs
	graceSeq     uint64     // identifies the current grace period; a stale expiry timer sees a newer one
	gone         bool       // removed from the table; every later request gets 404
	removedFor   string     // why, once gone ("deleted", "expired", ...)
	get          *getStream // the standalone GET currently attached, if any
	// delivered is the index of the last standalone event written to a
	// client; a fresh GET resumes after it, so messages stored while no GET
	// was connected (redirected orphans) are delivered once it is back.
	delivered int
	kick      chan struct{} // closed at the next kickAll (delivery.go)
	gens      []*generation // every generation not yet closed (one, but for a moment at a re-initialize)

	// Delivery state (delivery.go), under dmu. Lock order: dmu, then mu.
	dmu     sync.Mutex
	postSeq uint64
	posts   map[string]*post    // by token; nil when empty
	streams map[string]*post    // by go-sdk stream id; nil when empty
	replays map[string]*carrier // resumes of finished streams, by stream id; nil when empty
	holding map[*call]struct{}  // calls with held notifications; nil until the first
	nheld   int                 // notifications of calls' held lists, all calls
	nsent   int                 // of those, the ones sent to the standalone stream
	// replayed are standalone events that went onto a resumed POST stream
	// too (moved)
	replayed map[int]struct{}
	clock    clock.Clock
	maxAge   time.Duration // of held notifications, as of stored events
	park     bool          // Config.ParkCutNotes
	dropGap  bool          // Config.DropGapNotes
	// revisions are those the server negotiates at initialize, newest
	// first (Config.Revisions), for negotiated.
	revisions []string
	// resumeWait is how long a resume waits for a GET to settle
	// notifications sent to a standalone GET that died (Config.ResumeGETWait).
	resumeWait time.Duration
	// redirectDelay is how long after a POST stream's cut its call's
	// notifications wait before they go to a GET (Config.RedirectDelay).
	redirectDelay time.Duration
	// holder charges held notifications to the replay store's bytes; nil
	// for a store that does not (Redis: notifications are not held there).
	holder holder

	// torn are POST streams whose events the store missed in an outage,
	// true once marked there (outage.go). Under tmu, not dmu: the store's
	// appends read it, and deliver holds dmu while the go-sdk appends.
	// ntorn counts them, so that appends need no lock while there are none.
	tmu   sync.Mutex
	torn  map[string]bool
	ntorn atomic.Int32
}

// newSession makes a table entry for id; the caller adds it to the table.
func (srv *Server) newSession(id, principal string) *session {
	s := newSession(id, principal, srv.cfg.Clock, srv.cfg.EventMaxAge)
	s.st, s.shared, s.lease = srv.store, srv.shared, leaseTTL(srv.cfg.ReaperInterval)
	s.park, s.dropGap = srv.cfg.ParkCutNotes, srv.cfg.DropGapNotes
	s.revisions = srv.sessionRevisions()
	s.resumeWait = srv.cfg.ResumeGETWait
	s.redirectDelay = srv.cfg.RedirectDelay
	s.holder, _ = srv.events.(holder)
	return s
}

// holder is a replay store that charges what the server holds for it
// (eventstore.Store.Hold).
type holder interface {
	Hold(n int64) bool
	Unhold(n int64)
}

func newSession(id, principal string, clk clock.Clock, maxAge time.Duration) *session {
	s := &session{
		id: id, principal: principal, lastActivity: clk.Now(),
		clock: clk, maxAge: maxAge,
		delivered: -1,
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// close ends the session's context and every request bound to it.
func (s *session) close() {
	s.cancel()
	s.bmu.Lock()
	defer s.bmu.Unlock()
	s.ended = true
	for d := s.bound; d != nil; d = d.next {
		d.kill()
	}
}

// enlist binds d to the session: it is killed when the session ends, at
// once if it has.
func (s *session) enlist(d *deadlineWriter) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.ended {
		d.kill()
		return
	}
	d.next = s.bound
	if s.bound != nil {
		s.bound.prev = d
	}
	s.bound = d
	d.enlisted = true
}

// delist undoes enlist.
func (s *session) delist(d *deadlineWriter) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if !d.enlisted {
		return
	}
	if d.prev != nil {
		d.prev.next = d.next
	} else {
		s.bound = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	}
	d.prev, d.next, d.enlisted = nil, nil, false
}

// getStream is a standalone GET being served, so that a newer GET can replace it.
type getStream struct {
	cancel context.CancelFunc
	w      *streamWriter
	done   chan struct{}
	at     time.Time // when it was attached
}

// close ends the stream on purpose: a retry hint first, so the client knows
// when to come back (SSE-RETRY-FIELD). A write stalled on a client that
// stopped reading is aborted after closeWait, so closing never blocks.
func (g *getStream) close(retry time.Duration) {
	t := time.AfterFunc(closeWait, g.w.abort)
	g.w.close(retry)
	t.Stop()
	g.cancel()
}

// IncrementCounter implements tools.Session: the counter is in the store,
// and a store out of reach is an error, not a value.
func (s *session) IncrementCounter() (int64, error) {
	return s.st.Increment(s.ctx, s.id)
}

// JobOwner implements tools.Session.
func (s *session) JobOwner() jobs.Owner { return jobs.Owner{Principal: s.principal, Session: s.id} }

// Done implements tools.Session.
func (s *session) Done() <-chan struct{} { return s.ctx.Done() }

// begin records the start of a request. It reports false if the session has
// already been removed, in which case the caller answers as for an unknown id.
// A request during the grace period cancels it (GRACE-RECONNECT-CANCELS).
func (s *session) begin(now time.Time) (gen *generation, cancelledGrace, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return nil, false, false
	}
	s.inflight++
	s.lastActivity = now
	if s.inGrace {
		// The pending expiry timer fires later and finds a newer graceSeq.
		s.inGrace = false
		s.graceSeq++
		cancelledGrace = true
	}
	return s.gen, cancelledGrace, true
}

// end records the end of a request; the idle clock starts from here, so a
// long call or a connected GET never makes its session look idle.
func (s *session) end(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	s.lastActivity = now
}

// current returns the generation serving new requests.
func (s *session) current() *generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// acquire counts a request on g, or on the current generation if g has
// closed meanwhile (it was replaced). It reports false if the session has
// no open generation: it is gone.
func (s *session) acquire(g *generation) (*generation, bool) {
	for !g.acquire() {
		cur := s.current()
		if cur == g {
			return nil, false
		}
		g = cur
	}
	return g, true
}

// replace makes g the current generation and returns the one it replaces.
func (s *session) replace(g *generation) (prev *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, s.gen = s.gen, g
	return prev
}

// restore puts prev back in place of g, unless g has been replaced already.
func (s *session) restore(g, prev *generation) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != g {
		return false
	}
	s.gen = prev
	return true
}

// removal says why the session left the table ("" while it is in it).
func (s *session) removal() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removedFor
}

// isGone reports whether the session has left the table.
func (s *session) isGone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

// addGeneration enlists g among the session's transports; a session
// already removed gets none, so g starts closed: no request acquires it.
func (s *session) addGeneration(g *generation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		return
	}
	s.gens = append(s.gens, g)
}

func (s *session) forgetGeneration(g *generation) {
	s.mu.Lock()
	if i := slices.Index(s.gens, g); i >= 0 {
		s.gens = slices.Delete(s.gens, i, i+1)
	}
	s.mu.Unlock()
}

// closeGenerations closes every generation: the session is gone.
func (s *session) closeGenerations() {
	s.mu.Lock()
	all := slices.Clone(s.gens)
	s.mu.Unlock()
	for _, g := range all {
		g.close()
	}
}

// getAttached reports whether a standalone GET is being served.
func (s *session) getAttached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get != nil
}

// currentGET is the standalone GET attached now, or nil.
func (s *session) currentGET() *getStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get
}

// getAttachedBefore reports whether the standalone GET attached now was
// attached before t.
func (s *session) getAttachedBefore(t time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get != nil && s.get.at.Before(t)
}

// attachGET registers a new standalone GET and returns the one it replaces.
func (s *session) attachGET(cancel context.CancelFunc, w *streamWriter) (cur, old *getStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur = &getStream{cancel: cancel, w: w, done: make(chan struct{}), at: time.Now()}
	old, s.get = s.get, cur
	return cur, old
}

// detachGET deregisters g once its request has returned.
func (s *session) detachGET(g *getStream) {
	s.mu.Lock()
	if s.get == g {
		s.get = nil
	}
	s.mu.Unlock()
	close(g.done)
}

// dropGET ends the attached standalone GET, if any, without waiting.
func (s *session) dropGET(retry time.Duration) {
	s.mu.Lock()
	g := s.get
	s.mu.Unlock()
	if g != nil {
		g.close(retry)
	}
}

// markDelivered records that standalone event index reached a client.
func (s *session) markDelivered(index int) {
	s.mu.Lock()
	if index > s.delivered {
		s.delivered = index
	}
	s.kickLocked()
	s.mu.Unlock()
}

// resumeIndex is where a fresh standalone GET starts: after the last event
// a client was sent.
func (s *session) resumeIndex() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

// ended marks the end of a request on sess at the time it ends (a bare
// defer sess.end(clock.Now()) would read the clock when the request began).
func (s *Server) ended(sess *session) {
	now := s.cfg.Clock.Now()
	sess.end(now)
	if s.shared {
		s.store.Touch(context.Background(), sess.id, now)
	}
}
