package eventstore

import "sort"

// session holds the streams of one session and the tombstones of the
// streams it dropped.
type session struct {
	id      string
	streams map[string]*stream
	tombs   map[string]*tomb // nil when empty, so a drained map is freed
}

// marks is what answers a resume from an index: a tombstone keeps only
// this, so a dropped stream's ids are never reused and resumes from them
// still get ErrEvicted or nothing, as before it was dropped.
type marks struct {
	last  int // index of the last appended event, -1 if none
	floor int // highest index of an event with data that is gone (evicted or never kept), -1 if none
	lost  int // highest priming index whose resume point was evicted, -1 if none
}

func newMarks() marks { return marks{last: -1, floor: -1, lost: -1} }

// check reports whether every event with data after index (at least -1)
// is retained: nil, ErrFutureIndex or ErrEvicted. Events with data go in
// index order, so only those at or below floor are gone.
func (m *marks) check(index int) error {
	switch {
	case index > m.last:
		return ErrFutureIndex
	case index < m.floor:
		return ErrEvicted
	}
	return nil
}

// stream holds the retained events of one stream. Events without data
// (priming events) only take an index: nothing is stored for them.
type stream struct {
	sess *session
	id   string
	marks
	events queue[Event] // retained events with data, in index order
	// resumes maps a priming event that was followed by a backlog to the
	// index its response resumed after (see Prime).
	resumes map[int]int
	pending int  // responses due before the stream is finished; < 0: never (see WithRequests)
	refs    int  // records in Store.order that point here
	dead    bool // dropped or forgotten: records pointing here are stale
}

// firstAfter returns the position in st.events of the first event with an
// index above index, by binary search, so a resume costs what it replays.
// It counts the events it looks at in s.probes. s.mu must be held.
func (s *Store) firstAfter(st *stream, index int) int {
	return sort.Search(st.events.len(), func(i int) bool {
		s.probes++
		return st.events.at(i).Index > index
	})
}

// droppable reports whether st can give way to a tombstone: nothing of it
// is retained and no event can follow. A stream still running may append
// again, so it is kept (its numbering must go on) unless nothing was ever
// appended to it and its opening record has gone.
func (st *stream) droppable() bool {
	if st.dead || st.id == "" || st.events.len() > 0 || len(st.resumes) > 0 {
		return false
	}
	return st.pending == 0 || (st.last == -1 && st.refs == 0)
}

// tomb stands for a dropped stream. One whose stream is not finished was
// dropped before anything was appended to it, so losing it restarts no
// numbering; anything appended to it revives it into a stream.
type tomb struct {
	sess *session
	id   string
	marks
	pending int
	dead    bool // revived, expired or forgotten: its record is stale
}
