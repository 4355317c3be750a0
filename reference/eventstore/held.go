package eventstore

// Hold charges n bytes that the server keeps in memory for its sessions
// (the notifications it holds back while a call's stream is cut) against
// MaxBytes, as a charge only Unhold frees: the oldest evictable items go
// to make room. It reports false and charges nothing if there is no room
// even with every evictable item gone; the server then stores what it
// would have held, which the store bounds.
func (s *Store) Hold(n int64) bool {
	at := s.clk.Since(s.epoch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxBytes > 0 && s.fixed+n > s.maxBytes {
		return false
	}
	s.cost += n
	s.fixed += n
	s.held += n
	s.fitLocked(at)
	return true
}

// Unhold frees n bytes charged by Hold.
func (s *Store) Unhold(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cost -= n
	s.fixed -= n
	s.held -= n
}
