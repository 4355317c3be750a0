package eventstore

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
// to send first, and returns its index with the backlog to send next. Its
// cost follows the backlog, not the stream's history.
//
// A priming event stands for its response's resume point, not for its own
// place after the backlog: Prime from it yields that backlog again, so
// nothing is lost if only the priming event got through. Such a resume point
// is charged against MaxBytes and evicted in turn; resuming from its priming
// event then reports ErrEvicted.
//
// Errors are those of Check, except that with skipEvicted a gap is skipped
// and the backlog starts at the oldest retained event. An unknown stream is
// not created.
func (s *Store) Prime(sessionID, streamID string, index int, skipEvicted bool) (Priming, error) {
	at := s.clk.Since(s.epoch)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.fitLocked(at)
	m, st := s.lookupLocked(sessionID, streamID)
	if m == nil {
		return Priming{}, ErrUnknownStream
	}
	if tb := s.sessions[sessionID].tombs[streamID]; tb != nil && tb.pending != 0 {
		// Dropped before anything was appended, but not finished: once it
		// has an event its numbering must be kept.
		st = s.reviveLocked(tb)
		m = &st.marks
	}
	index = max(index, -1)
	from, mapped := 0, false
	if st != nil {
		from, mapped = st.resumes[index]
	}
	err := m.check(index)
	switch {
	case mapped:
		index = from
		err = m.check(index)
	case err == nil && m.lost >= 0 && index <= m.lost:
		// A priming event whose backlog went before it, or an index below one.
		err = ErrEvicted
	}
	switch {
	case err == ErrFutureIndex, err != nil && !skipEvicted:
		return Priming{}, err
	case err != nil:
		index = max(m.floor, m.lost)
	}
	var backlog []Event
	if st != nil {
		backlog = st.events.copyFrom(s.firstAfter(st, index))
	}
	m.last++
	p := Priming{Index: m.last, Backlog: backlog}
	if len(backlog) > 0 {
		if st.resumes == nil {
			st.resumes = make(map[int]int, 1)
		}
		st.resumes[p.Index] = index
		st.refs++
		s.cost += resumeCost
		s.pushLocked(resumeRecord(st, p.Index), at)
	}
	return p, nil
}
