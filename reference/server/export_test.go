package server

// HeldNotes is how many notifications the session with id holds for a
// stream (see hold): what a test waits on before it moves a fake clock
// past their age.
func (s *Server) HeldNotes(id string) int {
	sess := s.lookup(id)
	if sess == nil {
		return 0
	}
	sess.dmu.Lock()
	defer sess.dmu.Unlock()
	n := 0
	for c := range sess.holding {
		n += len(c.held)
	}
	return n
}
