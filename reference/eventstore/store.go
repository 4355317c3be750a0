// Package eventstore is the reference server's mcp.EventStore: it keeps the
// SSE events of every (session, stream) so that a client reconnecting with
// Last-Event-ID is replayed what it missed.
//
// Event ids on the wire are "<streamID>_<index>", where index is the 0-based
// position of the event in its stream (the standalone GET stream has stream
// id ""). An index is the absolute append position and eviction never
// renumbers, so an id keeps meaning the same event for as long as the
// session is known; once any event after it is gone, resuming from it
// reports ErrEvicted instead of silently skipping data.
//
// Events are evicted oldest first, by append time across all sessions, when
// they are older than Options.MaxAge (on Sweep) or when the total data size
// would exceed Options.MaxBytes (on Append). A session's streams and
// remaining events are freed only by Forget.
//
// Prime serves a server that replays a stream itself: it appends a priming
// event and returns what to send after it. The mcp.EventStore methods treat
// priming events as plain empty events.
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
	MaxBytes        int64         // bound on stored data bytes across all sessions; <= 0 means unbounded
	Clock           clock.Clock   // nil means clock.RealClock{}
}

// Stats is a point-in-time count of what the store retains.
type Stats struct {
	Sessions int   // sessions not yet forgotten
	Streams  int   // streams of those sessions, including fully evicted ones
	Events   int   // retained events, including empty priming events
	Bytes    int64 // retained data bytes
}

// Store is an in-memory mcp.EventStore. It is safe for concurrent use.
type Store struct {
	maxAge   time.Duration
	interval time.Duration
	maxBytes int64
	clk      clock.Clock
	epoch    time.Time // append times are offsets from here, on the clock's monotonic reading

	mu       sync.Mutex
	sessions map[string]map[string]*stream
	peak     int           // largest len(sessions) since the map was last rebuilt
	order    queue[record] // retained events, in append order, plus stale records
	stale    int           // records in order whose stream was forgotten
	streams  int
	events   int
	bytes    int64
}

// stream holds the retained suffix of one stream's events.
type stream struct {
	base   int // index of the first retained event; advanced by eviction so indices never shift
	events queue[[]byte]
	dead   bool // set by Forget so that records still pointing here are skipped
	// resumes maps a retained priming event that was followed by a backlog
	// to the index its response resumed after (see Prime).
	resumes map[int]int
	// lostBacklog: event base-1 was such a priming event; its backlog went
	// before it, so resuming from it can only report ErrEvicted.
	lostBacklog bool
}

// last is the index of the last appended event, -1 if none.
func (st *stream) last() int { return st.base + st.events.len() - 1 }

// record is the global append-order entry for one event. Both kinds of
// eviction pop from the front of Store.order, so each stream loses events
// from its own front, in index order.
type record struct {
	st    *stream
	index int
	at    time.Duration // append time since Store.epoch
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
		sessions: make(map[string]map[string]*stream),
	}
}

// Open implements mcp.EventStore. Re-opening an existing stream keeps its
// events and numbering: the SDK opens the standalone stream whenever it
// connects a transport, including a new transport for an existing session.
func (s *Store) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openLocked(sessionID, streamID)
	return nil
}

func (s *Store) openLocked(sessionID, streamID string) *stream {
	streams, ok := s.sessions[sessionID]
	if !ok {
		streams = make(map[string]*stream, 1)
		s.sessions[sessionID] = streams
		s.peak = max(s.peak, len(s.sessions))
	}
	st, ok := streams[streamID]
	if !ok {
		st = &stream{}
		streams[streamID] = st
		s.streams++
	}
	return st
}

// Append implements mcp.EventStore. The event gets the next index of the
// stream, which is created if it was not opened. Empty data (the priming
// event) takes an index but no bytes. If MaxBytes is set, the oldest events
// of any session are evicted until the new data fits.
func (s *Store) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	// The interface does not hand over ownership of data, so keep a copy.
	var d []byte
	if len(data) > 0 {
		d = bytes.Clone(data)
	}
	at := s.clk.Since(s.epoch) // not under s.mu: a fake clock runs timers under its own lock
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLocked(s.openLocked(sessionID, streamID), d, at)
	return nil
}

// appendLocked adds d, which the store owns, to st and returns its index;
// at is the time since the epoch, read before s.mu was taken.
func (s *Store) appendLocked(st *stream, d []byte, at time.Duration) int {
	if s.maxBytes > 0 {
		// Stop once no bytes are left, so an oversized event does not also
		// flush every empty priming event.
		for s.bytes > 0 && s.bytes+int64(len(d)) > s.maxBytes {
			s.popOldestLocked()
		}
	}
	st.events.push(d)
	// Appends that read the clock before a later one took the lock keep
	// the records in time order, which Sweep relies on.
	if n := s.order.len(); n > 0 {
		at = max(at, s.order.at(n-1).at)
	}
	s.order.push(record{st: st, index: st.last(), at: at})
	s.events++
	s.bytes += int64(len(d))
	return st.last()
}

// popOldestLocked drops the front of s.order and, unless its stream was
// forgotten, the event it stands for.
func (s *Store) popOldestLocked() {
	r := s.order.front()
	s.order.pop()
	if r.st.dead {
		s.stale--
		return
	}
	st := r.st
	s.bytes -= int64(len(st.events.front()))
	s.events--
	st.events.pop()
	_, st.lostBacklog = st.resumes[st.base]
	delete(st.resumes, st.base)
	st.base++
}

// After implements mcp.EventStore. It yields the data of the events with
// index > index in order; index -1 (or less) means from the start. If any of
// those events was evicted it yields a single error wrapping ErrEvicted and
// nothing else, never a partial replay; an unknown session or stream gives a
// single error wrapping ErrUnknownStream. An index at or past the last event
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
	st, err := s.checkLocked(sessionID, streamID, index)
	switch {
	case errors.Is(err, ErrFutureIndex):
		return nil, nil
	case errors.Is(err, ErrEvicted):
		return nil, fmt.Errorf("%w: session %q, stream %q, after index %d", err, sessionID, streamID, index)
	case err != nil:
		return nil, fmt.Errorf("%w: session %q, stream %q", err, sessionID, streamID)
	}
	return st.events.copyFrom(max(index, -1) + 1 - st.base), nil
}

// Check reports what After would say about resuming after index, without
// copying anything: nil, ErrUnknownStream, ErrEvicted, or ErrFutureIndex if
// index is past the last event. The errors are returned unwrapped.
func (s *Store) Check(sessionID, streamID string, index int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.checkLocked(sessionID, streamID, index)
	return err
}

func (s *Store) checkLocked(sessionID, streamID string, index int) (*stream, error) {
	st, ok := s.sessions[sessionID][streamID]
	if !ok {
		return nil, ErrUnknownStream
	}
	index = max(index, -1)
	switch last := st.last(); {
	case index > last:
		return st, ErrFutureIndex
	case index < last && index+1 < st.base:
		// At least event index+1 is wanted and it is gone. A fully evicted
		// stream still resumes cleanly from its last index.
		return st, ErrEvicted
	}
	return st, nil
}

// Event is a stored event and its index in its stream.
type Event struct {
	Index int
	Data  []byte // shared with the store: do not modify
}

// Priming is what Prime returns: the priming event's index and the backlog
// to send after it, the events with data after the resume point, in order.
type Priming struct {
	Index   int
	Backlog []Event
}

// Prime starts an SSE response that resumes the stream after index (-1 or
// less: from the start): it appends an empty priming event, for the response
// to send first, and returns its index with the backlog to send next.
//
// A priming event stands for its response's resume point, not for its own
// place after the backlog: Prime from it yields that backlog again, so
// nothing is lost if only the priming event got through. Backlogs hold no
// empty events, so priming events are never replayed.
//
// Errors are those of Check, except that with skipEvicted a gap is skipped
// and the backlog starts at the oldest retained event. An unknown stream is
// not created.
func (s *Store) Prime(sessionID, streamID string, index int, skipEvicted bool) (Priming, error) {
	at := s.clk.Since(s.epoch)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[sessionID][streamID]
	if !ok {
		return Priming{}, ErrUnknownStream
	}
	index = max(index, -1)
	if from, ok := st.resumes[index]; ok {
		index = from
	}
	switch last := st.last(); {
	case index > last:
		return Priming{}, ErrFutureIndex
	case index < last && index+1 < st.base, index == st.base-1 && st.lostBacklog:
		if !skipEvicted {
			return Priming{}, ErrEvicted
		}
		index = st.base - 1
	}
	var backlog []Event
	for i := index + 1 - st.base; i < st.events.len(); i++ {
		if d := st.events.at(i); len(d) > 0 {
			backlog = append(backlog, Event{Index: st.base + i, Data: d})
		}
	}
	p := Priming{Index: s.appendLocked(st, nil, at), Backlog: backlog}
	if len(backlog) > 0 {
		if st.resumes == nil {
			st.resumes = make(map[int]int, 1)
		}
		st.resumes[p.Index] = index
	}
	return p, nil
}

// LastIndex returns the index of the last event appended to the stream, -1
// if it was opened but is empty. Eviction does not change it. ok is false if
// the session or stream is unknown.
func (s *Store) LastIndex(sessionID, streamID string) (index int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[sessionID][streamID]
	if !ok {
		return 0, false
	}
	return st.last(), true
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

// Forget frees every stream and event of the session. Later calls for it
// report ErrUnknownStream until it is opened or appended to again, which
// starts numbering from 0.
func (s *Store) Forget(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams, ok := s.sessions[sessionID]
	if !ok {
		return
	}
	for _, st := range streams {
		n := st.events.len()
		for i := range n {
			s.bytes -= int64(len(st.events.at(i)))
		}
		s.events -= n
		s.stale += n
		st.events = queue[[]byte]{}
		st.dead = true
	}
	s.streams -= len(streams)
	delete(s.sessions, sessionID)

	// Drop stale records once they are half of s.order; the rebuild costs
	// at most twice the records forgotten since the last one.
	if s.stale > 0 && 2*s.stale >= s.order.len() {
		s.order.filter(func(r record) bool { return !r.st.dead })
		s.stale = 0
	}
	// Go maps never shrink, so rebuild after a burst of sessions has gone.
	if s.peak > 1024 && len(s.sessions) < s.peak/4 {
		m := make(map[string]map[string]*stream, len(s.sessions))
		for id, streams := range s.sessions {
			m[id] = streams
		}
		s.sessions = m
		s.peak = len(m)
	}
}

// Stats returns the current counts.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Sessions: len(s.sessions),
		Streams:  s.streams,
		Events:   s.events,
		Bytes:    s.bytes,
	}
}
