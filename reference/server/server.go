package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/store"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// Server is the reference server: an http.Handler over a session table.
// Call Run to start the reaper and the event and job sweeps.
type Server struct {
	cfg     Config
	log     *slog.Logger // lifecycle events
	sdkLog  *slog.Logger // the go-sdk's own chatter, one level down
	events  store.Events
	store   store.Store
	shared  bool        // the store is shared with other replicas (see shared.go)
	closing atomic.Bool // Close: sessions leave this process, not the store
	jobs    *jobs.Store
	tasks   *tasks.Store
	// taskOrigin maps a running task's id to the session that created it,
	// for notifications/tasks/status (taskstatus.go).
	taskOrigin sync.Map
	modern     *modern // the sessionless revision
	schemas    *mcp.SchemaCache
	sdk        *mcp.Server // shared by every generation (see newSDKServer)
	sdkFor     func(*http.Request) *mcp.Server
	ids        idHandoff    // session ids for sdk's GetSessionID
	serving    atomic.Int64 // requests between bind and release

	mu           sync.Mutex
	sessions     map[string]*session
	hints        map[string]*hint   // recovery hints by principal and stale id
	perPrincipal map[string]int     // sessions per named principal
	buckets      map[string]*bucket // new anonymous sessions by remote address
}

var _ mcp.EventStore = (*eventstore.Store)(nil)

// errTooManySessions is answered with 503 rather than growing without bound.
var errTooManySessions = errors.New("too many sessions")

// New validates cfg and builds a server. Zero fields of cfg take the
// production defaults.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var s *Server // the task store's OnStatus reaches the server
	s = &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		sdkLog:   slog.New(demoted{cfg.Logger.Handler()}).With("component", "go-sdk"),
		schemas:  mcp.NewSchemaCache(),
		sessions: map[string]*session{},
		hints:    map[string]*hint{},

		perPrincipal: map[string]int{},
		buckets:      map[string]*bucket{},
		jobs: jobs.New(jobs.Options{
			TokenTTL:            cfg.ResumeTokenTTL,
			MaxRunning:          cfg.MaxJobs,
			MaxRunningPerOwner:  cfg.MaxJobsPerClient,
			MaxRetained:         cfg.MaxRetainedJobs,
			MaxRetainedPerOwner: cfg.MaxRetainedJobsPerClient,
			Clock:               cfg.Clock,
			Mirror:              jobMirror(cfg.Store),
		}),
		tasks: tasks.New(tasks.Options{
			DefaultTTL:   cfg.TaskTTL,
			MaxTTL:       cfg.TaskMaxTTL,
			PollInterval: cfg.TaskPollInterval,
			MaxTasks:     cfg.MaxTasks,
			MaxPerOwner:  cfg.MaxTasksPerClient,
			MaxRetained:  cfg.MaxRetainedTasksPerClient,
			Clock:        cfg.Clock,
			Shared:       sharedTasks(cfg.Store),
			Lease:        leaseTTL(cfg.ReaperInterval),
			OnStatus:     func(snap tasks.Snapshot) { s.notifyTaskStatus(snap) },
			Settling:     func() bool { return s.settling() },
		}),
	}
	s.store = cfg.Store
	if s.store == nil {
		s.store = store.NewMemory(eventstore.New(eventstore.Options{
			MaxAge:          cfg.EventMaxAge,
			CleanupInterval: cfg.EventCleanupInterval,
			MaxBytes:        cfg.EventMaxBytes,
			Clock:           cfg.Clock,
			HandedOver:      true, // only the go-sdk appends, each message encoded afresh
		}))
	}
	s.events = s.store.Events()
	s.shared = s.store.Shared()
	s.modern = s.newModern()
	s.sdk = s.newSDKServer()
	s.sdkFor = func(*http.Request) *mcp.Server { return s.sdk }
	return s, nil
}

// Run runs the session reaper and the event and job sweeps until ctx ends,
// then closes the server.
func (s *Server) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.events.Run(ctx) })
	wg.Go(func() { s.jobs.Run(ctx) })
	if s.shared {
		wg.Go(func() { s.watchGone(ctx) })
		wg.Go(func() { s.watchOutages(ctx) })
	}
	wg.Go(func() { s.tasks.Run(ctx) })
	s.runReaper(ctx)
	wg.Wait()
	s.Close()
}

// Close ends every session and listen stream, releasing their hanging
// streams, and every job.
// Sessions are closed in parallel, so stalled streams (each bounded by
// closeWait) do not add up.
func (s *Server) Close() {
	s.closing.Store(true)
	s.modern.listens.end() // each listen stream gets its completion response
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sess := range all {
		wg.Go(func() { s.remove(sess, "closed at shutdown", nil) })
	}
	wg.Wait()
	s.jobs.Close()
	s.tasks.Close()
}

// HTTPServer returns an http.Server for h (the server, or a handler in
// front of it) with the configured read and idle timeouts. It has no
// WriteTimeout: that would cut streams; every write has its own deadline.
func (s *Server) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadTimeout:       s.cfg.ReadTimeout,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
	}
}

// SessionCount reports how many sessions the table holds.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// SweepEvents evicts events older than the max age now (Run does it every
// event cleanup interval).
func (s *Server) SweepEvents() { s.events.Sweep() }

// EventStats reports what the replay store holds.
func (s *Server) EventStats() eventstore.Stats { return s.events.Stats() }

// InFlight reports how many requests are being served, connected GET streams included.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sess := range s.sessions {
		sess.mu.Lock()
		n += sess.inflight
		sess.mu.Unlock()
	}
	return n
}

// Reserved returns how many tool calls and waiting tasks/result requests
// hold a place under MaxCallsPerSession, in every live session.
func (s *Server) Reserved() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sess := range s.sessions {
		n += int(sess.calls.Load())
	}
	return n
}

// lookup returns the live session with the given id.
func (s *Server) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// create adds a new session with a fresh crypto-random id (rand.Text: 26
// base32 characters, 130 bits, all visible ASCII) and its first generation.
// remote is the client's address, for the anonymous rate limit.
func (s *Server) create(principal, remote string) (*session, error) {
	sess, err := s.createLocal(principal, remote)
	if err != nil {
		return nil, err
	}
	if err := s.store.Create(context.Background(), store.Session{ID: sess.id, Principal: principal}, s.cfg.Clock.Now()); err != nil {
		s.remove(sess, "dropped: store failed", nil)
		if !errors.Is(err, errStore) {
			err = fmt.Errorf("%w: %v", errStore, err)
		}
		return nil, err
	}
	return sess, nil
}

// createLocal adds the session to this process's table.
func (s *Server) createLocal(principal, remote string) (*session, error) {
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.MaxSessions > 0 && len(s.sessions) >= s.cfg.MaxSessions {
		return nil, errTooManySessions
	}
	if err := s.admitLocked(principal, remote, now); err != nil {
		return nil, err
	}
	if principal != "" {
		s.perPrincipal[principal]++
	}
	sess := s.newSession(rand.Text(), principal)
	sess.gen = s.newGeneration(sess)
	s.sessions[sess.id] = sess
	return sess, nil
}

// remove takes sess out of the table and frees its state: transports,
// event history, recovery hint. reason is logged ("expired", "deleted", ...).
// If onlyIf is non-nil it is checked under the session's lock, so that a
// request racing an expiry wins. It reports false if nothing was removed.
func (s *Server) remove(sess *session, reason string, onlyIf func() bool) bool {
	return s.removeAt(sess, reason, onlyIf, s.cfg.Clock.Now())
}

// removeAt is remove at time now, for a clock callback: a fake clock runs
// those under its lock, so they must not ask it the time.
func (s *Server) removeAt(sess *session, reason string, onlyIf func() bool, now time.Time) bool {
	s.mu.Lock()
	sess.mu.Lock()
	if s.sessions[sess.id] != sess || (onlyIf != nil && !onlyIf()) {
		sess.mu.Unlock()
		s.mu.Unlock()
		return false
	}
	delete(s.sessions, sess.id)
	if sess.principal != "" {
		if s.perPrincipal[sess.principal]--; s.perPrincipal[sess.principal] <= 0 {
			delete(s.perPrincipal, sess.principal)
		}
	}
	if sess.hintKey != "" {
		delete(s.hints, sess.hintKey)
	}
	sess.gone = true
	sess.removedFor = reason
	sess.inGrace = false
	sess.mu.Unlock()
	s.mu.Unlock()

	sess.dropGET(s.cfg.SSERetry) // with a retry hint, before the streams are cut
	sess.close()
	if n := s.jobs.CancelSession(sess.id, now); n > 0 {
		s.log.Info("session jobs cancelled", "session", sess.id, "jobs", n)
	}
	sess.closeGenerations()
	// Leaving this process is not leaving a shared table: at shutdown, or
	// when another replica removed it, the store is not touched here.
	if !s.shared || (!s.closing.Load() && !localOnly(reason)) {
		s.store.Remove(context.Background(), sess.id)
		s.events.Forget(sess.id)
	}
	if s.log.Enabled(context.Background(), slog.LevelInfo) { // the arguments cost allocations even when off
		s.log.Info("session "+reason, "session", sess.id)
	}
	return true
}

// TaskCount reports how many tasks the task store holds.
func (s *Server) TaskCount() int { return s.tasks.Len() }
