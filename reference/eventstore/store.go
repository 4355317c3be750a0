// Package eventstore is the reference server's mcp.EventStore: it keeps the
// SSE events of every (session, stream) so that a client reconnecting with
// Last-Event-ID is replayed what it missed.
//
// Event ids on the wire are "<streamID>_<index>", where index is the 0-based
// position of the event in its stream (the standalone GET stream has stream
// id ""). An index is the absolute append position and eviction never
// renumbers, so an id keeps meaning the same event for as long as the
// session is known; once any event with data after it is gone, resuming
// from it reports ErrEvicted instead of silently skipping data. Events
// without data (priming events) take an index and are not stored: a replay
// yields only events with data.
//
// Everything the store holds is charged against Options.MaxBytes: event
// data plus a per-event overhead, resume points, streams, tombstones and
// sessions. Evictable items go oldest first, by append time across all
// sessions, when they are older than Options.MaxAge (on Sweep) or when the
// total would exceed MaxBytes (on Append and Prime). A POST stream that is
// finished (see WithRequests) and has nothing left is replaced by a
// tombstone that keeps its numbering and is evicted in turn. Sessions, the
// standalone streams and the streams of requests still running are charged
// but only Forget frees them; what the server holds in memory for its
// sessions is charged by Hold, and freed by Unhold.
//
// Prime serves a server that replays a stream itself: it appends a priming
// event and returns what to send after it.
package eventstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Suggested settings for the reference server. New does not apply
// DefaultMaxAge or DefaultMaxBytes, because zero means "no limit" there.
const (
	DefaultMaxAge          = 10 * time.Minute
	DefaultCleanupInterval = 5 * time.Minute
	DefaultMaxBytes        = 10 << 20 // 10 MiB
)

var (
	// ErrEvicted means an event after the requested id is no longer stored,
	// so a replay would have a gap.
	ErrEvicted = errors.New("event store: events after this id were evicted")
	// ErrUnknownStream means the session or the stream within it was never
	// opened or appended to, or the session was forgotten.
	ErrUnknownStream = errors.New("event store: unknown session or stream")
	// ErrFutureIndex means the requested id is past the last event appended
	// to the stream, so it cannot have been sent by this server.
	ErrFutureIndex = errors.New("event store: event id is beyond the last event of the stream")
)

// Options configures a Store.
type Options struct {
	MaxAge          time.Duration // events older than this are evicted by Sweep; <= 0 means no age limit
	CleanupInterval time.Duration // how often Run sweeps; <= 0 means DefaultCleanupInterval
	MaxBytes        int64         // bound on Stats.Cost across all sessions; <= 0 means unbounded
	Clock           clock.Clock   // nil means clock.RealClock{}
	// HandedOver: the caller hands each Append's data over and never
	// changes it afterwards, so the store keeps the slice instead of a
	// copy. The go-sdk encodes every message afresh and its own
	// MemoryEventStore keeps the slice too; other callers may reuse a
	// buffer, hence the copy by default.
	HandedOver bool
}

// Stats is a point-in-time count of what the store retains.
type Stats struct {
	Sessions   int   // sessions not yet forgotten
	Streams    int   // streams of those sessions, including fully evicted ones not yet dropped
	Tombstones int   // dropped streams still remembered
	Events     int   // retained events (all have data)
	Bytes      int64 // retained data bytes
	Cost       int64 // what MaxBytes bounds: data plus the overhead of every item
	Held       int64 // of Cost, what the server holds in memory for its sessions (Hold)
}

// Store is an in-memory mcp.EventStore. It is safe for concurrent use.
type Store struct {
	maxAge   time.Duration
	interval time.Duration
	maxBytes int64
	clk      clock.Clock
	epoch    time.Time // append times are offsets from here, on the clock's monotonic reading
	owned    bool      // Options.HandedOver

	mu       sync.Mutex
	sessions map[string]*session
	peak     int           // largest len(sessions) since the map was last rebuilt
	order    queue[record] // evictable items, in append order, plus stale records
	stale    int           // records in order whose item is gone
	streams  int
	tombs    int
	events   int
	bytes    int64
	cost     int64
	fixed    int64 // cost of what only Forget frees: sessions and their standalone streams, and Hold's
	held     int64 // Hold's charges
	probes   int   // events looked at to find where a resume starts (see firstAfter)
}

// New returns an empty Store.
func New(opts Options) *Store {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	interval := opts.CleanupInterval
	if interval <= 0 {
		interval = DefaultCleanupInterval
	}
	return &Store{
		maxAge:   max(opts.MaxAge, 0),
		interval: interval,
		maxBytes: max(opts.MaxBytes, 0),
		clk:      clk,
		epoch:    clk.Now(),
		owned:    opts.HandedOver,
		sessions: make(map[string]*session),
	}
}

// Open implements mcp.EventStore. Re-opening an existing stream keeps its
// events and numbering: the SDK opens the standalone stream whenever it
// connects a transport, including a new transport for an existing session.
// A POST stream opened with a WithRequests context can be dropped once
// finished.
func (s *Store) Open(ctx context.Context, sessionID, streamID string) error {
	pending := -1
	if n, ok := requestsFrom(ctx); ok && streamID != "" {
		pending = n
	}
	at := s.clk.Since(s.epoch) // not under s.mu: a fake clock runs timers under its own lock
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.fitLocked(at)
	sess := s.sessionLocked(sessionID)
	if sess.streams[streamID] == nil && sess.tombs[streamID] == nil {
		st := s.newStreamLocked(sess, streamID, newMarks(), pending)
		if streamID != "" {
			// Until something is appended, only this record lets an
			// opened stream go: a request refused after Open never appends.
			st.refs++
			s.pushLocked(openRecord(st), at)
		}
	}
	return nil
}

func (s *Store) sessionLocked(id string) *session {
	sess, ok := s.sessions[id]
	if !ok {
		sess = &session{id: id, streams: make(map[string]*stream, 1)}
		s.sessions[id] = sess
		s.peak = max(s.peak, len(s.sessions))
		s.cost += idCost(sessionCost, id)
		s.fixed += idCost(sessionCost, id)
	}
	return sess
}

func (s *Store) newStreamLocked(sess *session, id string, m marks, pending int) *stream {
	st := &stream{sess: sess, id: id, marks: m, pending: pending}
	sess.streams[id] = st
	s.streams++
	s.cost += idCost(streamCost, id)
	if id == "" {
		s.fixed += streamCost
	}
	return st
}

// Append implements mcp.EventStore. The event gets the next index of the
// stream, which is created if it was not opened. Empty data (the priming
// event) takes an index and nothing else. If MaxBytes is set, the oldest
// items of any session are evicted until the new event fits; an event that
// could never fit is not kept, so resuming from before it reports
// ErrEvicted.
func (s *Store) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	// The interface does not hand over ownership of data, so keep a copy
	// unless the caller said it does (Options.HandedOver).
	var d []byte
	resp := false
	if len(data) > 0 {
		d = data
		if !s.owned {
			d = bytes.Clone(data)
		}
		resp = IsResponse(d)
	}
	at := s.clk.Since(s.epoch)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.fitLocked(at)
	sess := s.sessionLocked(sessionID)
	st, tb := sess.streams[streamID], sess.tombs[streamID]
	switch {
	case d == nil && st == nil && tb != nil && tb.pending == 0:
		tb.last++ // finished: no data can follow, the tombstone can stay
		return nil
	case st == nil && tb != nil:
		st = s.reviveLocked(tb)
	case st == nil:
		st = s.newStreamLocked(sess, streamID, newMarks(), -1)
	}
	st.last++
	if streamID == "" {
		if ix, ok := ctx.Value(indexKey{}).(*int); ok {
			*ix = st.last
		}
	}
	if d == nil {
		return nil
	}
	if resp && st.pending > 0 {
		st.pending--
	}
	s.appendLocked(st, Event{Index: st.last, Data: d}, at)
	s.retireLocked(st, at)
	return nil
}

// appendLocked keeps ev, whose data the store owns, as st's newest event;
// the caller then evicts to fit.
func (s *Store) appendLocked(st *stream, ev Event, at time.Duration) {
	c := eventCost + int64(len(ev.Data))
	if s.maxBytes > 0 && c > s.maxBytes-s.fixed {
		// It would not fit even alone: keep the others rather than flush
		// them all for nothing.
		st.floor = ev.Index
		return
	}
	st.events.push(ev)
	st.refs++
	s.pushLocked(eventRecord(st, ev.Index), at)
	s.events++
	s.bytes += int64(len(ev.Data))
	s.cost += c
}

// lookupLocked returns the marks of a stream or tombstone, and the stream
// if it is not dropped; m is nil if neither is known.
func (s *Store) lookupLocked(sessionID, streamID string) (m *marks, st *stream) {
	sess := s.sessions[sessionID]
	if sess == nil {
		return nil, nil
	}
	if st := sess.streams[streamID]; st != nil {
		return &st.marks, st
	}
	if tb := sess.tombs[streamID]; tb != nil {
		return &tb.marks, nil
	}
	return nil, nil
}

// After implements mcp.EventStore. It yields the data of the events with
// index > index in order; index -1 (or less) means from the start. Events
// without data are not stored and so not yielded. If any of those events
// was evicted it yields a single error wrapping ErrEvicted and nothing
// else, never a partial replay; an unknown session or stream gives a single
// error wrapping ErrUnknownStream. An index at or past the last event
// yields nothing.
//
// The events are copied out under the lock when iteration starts, so the
// caller may use the store while iterating. The yielded slices are shared
// with the store and must not be modified.
func (s *Store) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		data, err := s.snapshot(sessionID, streamID, index)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (s *Store) snapshot(sessionID, streamID string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	index = max(index, -1)
	m, st := s.lookupLocked(sessionID, streamID)
	if m == nil {
		return nil, fmt.Errorf("%w: session %q, stream %q", ErrUnknownStream, sessionID, streamID)
	}
	switch err := m.check(index); {
	case errors.Is(err, ErrFutureIndex):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w: session %q, stream %q, after index %d", err, sessionID, streamID, index)
	}
	if st == nil {
		return nil, nil
	}
	i := s.firstAfter(st, index)
	if i == st.events.len() {
		return nil, nil
	}
	data := make([][]byte, st.events.len()-i)
	for j := range data {
		data[j] = st.events.at(i + j).Data
	}
	return data, nil
}

// Check reports what After would say about resuming after index, without
// copying anything: nil, ErrUnknownStream, ErrEvicted, or ErrFutureIndex if
// index is past the last event. The errors are returned unwrapped.
func (s *Store) Check(sessionID, streamID string, index int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, _ := s.lookupLocked(sessionID, streamID)
	if m == nil {
		return ErrUnknownStream
	}
	return m.check(max(index, -1))
}

// LastIndex returns the index of the last event appended to the stream, -1
// if it was opened but is empty. Eviction does not change it. ok is false if
// the session or stream is unknown.
func (s *Store) LastIndex(sessionID, streamID string) (index int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, _ := s.lookupLocked(sessionID, streamID)
	if m == nil {
		return 0, false
	}
	return m.last, true
}

// SessionClosed implements mcp.EventStore and deliberately does nothing.
//
// The server recreates the SDK transport for the same session id when a
// client re-initializes, and closing the old transport calls SessionClosed.
// Dropping the events then would break resumption of a session that is
// still alive, so they are kept until the server calls Forget when the
// session really expires or is deleted.
func (s *Store) SessionClosed(context.Context, string) error {
	return nil
}

// Stats returns the current counts.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Sessions:   len(s.sessions),
		Streams:    s.streams,
		Tombstones: s.tombs,
		Events:     s.events,
		Bytes:      s.bytes,
		Cost:       s.cost,
		Held:       s.held,
	}
}
