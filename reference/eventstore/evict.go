package eventstore

import "time"

// Heap bytes each item is charged beyond its data and id, so that MaxBytes
// bounds memory rather than payload alone. They are rounded-up sizes of the
// structs, slots and map entries involved (TestE2ECostsCoverHeap checks them).
const (
	eventCost   = 112 // a queue slot for the event and its record, with slices grown ahead
	resumeCost  = 96  // a map entry and a record
	streamCost  = 256 // the stream, its map entry and its opening record
	tombCost    = 128 // the tombstone, its map entry and its record
	sessionCost = 256 // the session, its map entry and its stream map
)

type recordKind uint8

const (
	recEvent  recordKind = iota // st's oldest retained event
	recResume                   // st's resume point
	recOpen                     // st's opening, while nothing was appended to it
	recTomb                     // tombstone tb
)

// record is one entry of Store.order, the append-order list of everything
// that can be evicted. Both kinds of eviction pop from its front, so each
// stream loses its events oldest first, in index order.
type record struct {
	st *stream
	tb *tomb
	// ix is the event's index (>= 0), or -1 for an opening, or -2-p for
	// the resume point of priming event p: a record is 32 bytes, one per
	// retained event.
	ix int
	at time.Duration // time since Store.epoch
}

func eventRecord(st *stream, index int) record { return record{st: st, ix: index} }
func resumeRecord(st *stream, p int) record    { return record{st: st, ix: -2 - p} }
func openRecord(st *stream) record             { return record{st: st, ix: -1} }
func tombRecord(tb *tomb) record               { return record{tb: tb} }

func (r record) kind() recordKind {
	switch {
	case r.tb != nil:
		return recTomb
	case r.ix >= 0:
		return recEvent
	case r.ix == -1:
		return recOpen
	}
	return recResume
}

// index is the event's index or the resume point's priming index.
func (r record) index() int {
	if r.ix >= 0 {
		return r.ix
	}
	return -2 - r.ix
}

func (r record) stale() bool {
	if r.tb != nil {
		return r.tb.dead
	}
	return r.st.dead
}

func idCost(base int64, id string) int64 { return base + int64(len(id)) }

// pushLocked appends r to s.order at time at, kept in time order: appends
// that read the clock before a later one took the lock move up to it.
func (s *Store) pushLocked(r record, at time.Duration) {
	if n := s.order.len(); n > 0 {
		at = max(at, s.order.at(n-1).at)
	}
	r.at = at
	s.order.push(r)
}

// fitLocked evicts, oldest first, until the store is within MaxBytes or
// nothing evictable is left.
func (s *Store) fitLocked(at time.Duration) {
	for s.maxBytes > 0 && s.cost > s.maxBytes && s.order.len() > 0 {
		s.popOldestLocked(at)
	}
}

// popOldestLocked evicts the front of s.order, unless it is stale.
func (s *Store) popOldestLocked(at time.Duration) {
	r := s.order.front()
	s.order.pop()
	if r.stale() {
		s.stale--
		return
	}
	if r.tb != nil {
		s.dropTombLocked(r.tb)
		return
	}
	st := r.st
	st.refs--
	switch r.kind() {
	case recEvent:
		ev := st.events.front()
		st.events.pop()
		st.floor = max(st.floor, ev.Index)
		s.events--
		s.bytes -= int64(len(ev.Data))
		s.cost -= eventCost + int64(len(ev.Data))
	case recResume:
		// Its backlog, being older, is gone already.
		delete(st.resumes, r.index())
		st.lost = max(st.lost, r.index())
		s.cost -= resumeCost
	}
	s.retireLocked(st, at)
}

// retireLocked replaces st by a tombstone if it can be dropped.
func (s *Store) retireLocked(st *stream, at time.Duration) {
	if !st.droppable() {
		return
	}
	sess := st.sess
	delete(sess.streams, st.id)
	s.streams--
	s.cost -= idCost(streamCost, st.id)
	st.dead = true
	s.stale += st.refs
	tb := &tomb{sess: sess, id: st.id, marks: st.marks, pending: st.pending}
	if sess.tombs == nil {
		sess.tombs = make(map[string]*tomb, 1)
	}
	sess.tombs[st.id] = tb
	s.tombs++
	s.cost += idCost(tombCost, st.id)
	s.pushLocked(tombRecord(tb), at)
	s.compactLocked()
}

// compactLocked drops stale records once they are half of s.order, so they
// never hold more than the live ones; the rebuild costs at most twice the
// records that went stale since the last one.
func (s *Store) compactLocked() {
	if s.stale > 0 && 2*s.stale >= s.order.len() {
		s.order.filter(func(r record) bool { return !r.stale() })
		s.stale = 0
	}
}

// dropTombLocked forgets tb: its stream is then unknown.
func (s *Store) dropTombLocked(tb *tomb) {
	delete(tb.sess.tombs, tb.id)
	if len(tb.sess.tombs) == 0 {
		tb.sess.tombs = nil
	}
	s.tombs--
	s.cost -= idCost(tombCost, tb.id)
	tb.dead = true
}

// reviveLocked turns tb back into a stream, for an event with data that
// came after all: its numbering goes on where it stopped.
func (s *Store) reviveLocked(tb *tomb) *stream {
	s.dropTombLocked(tb)
	s.stale++ // its record
	st := &stream{sess: tb.sess, id: tb.id, marks: tb.marks, pending: tb.pending}
	tb.sess.streams[tb.id] = st
	s.streams++
	s.cost += idCost(streamCost, tb.id)
	s.compactLocked()
	return st
}

// Forget frees every stream, tombstone and event of the session. Later
// calls for it report ErrUnknownStream until it is opened or appended to
// again, which starts numbering from 0.
func (s *Store) Forget(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[sessionID]
	if !ok {
		return
	}
	for _, st := range sess.streams {
		for i := range st.events.len() {
			n := int64(len(st.events.at(i).Data))
			s.bytes -= n
			s.cost -= eventCost + n
		}
		s.events -= st.events.len()
		s.cost -= int64(len(st.resumes))*resumeCost + idCost(streamCost, st.id)
		s.stale += st.refs
		st.events = queue[Event]{}
		st.dead = true
	}
	for _, tb := range sess.tombs {
		s.cost -= idCost(tombCost, tb.id)
		s.stale++
		tb.dead = true
	}
	s.streams -= len(sess.streams)
	s.tombs -= len(sess.tombs)
	s.cost -= idCost(sessionCost, sessionID)
	s.fixed -= idCost(sessionCost, sessionID)
	if _, ok := sess.streams[""]; ok {
		s.fixed -= streamCost
	}
	delete(s.sessions, sessionID)
	s.compactLocked()
	// Go maps never shrink, so rebuild after a burst of sessions has gone.
	if s.peak > 1024 && len(s.sessions) < s.peak/4 {
		m := make(map[string]*session, len(s.sessions))
		for id, sess := range s.sessions {
			m[id] = sess
		}
		s.sessions = m
		s.peak = len(m)
	}
}
