package server

import "testing"

// TestResumeHoldsPastNewGET: a GET took a call's notifications and died; a
// new GET reconnects while a resume of the call's stream takes it over. A
// notification sent in between is held for the resume, not written to the
// new GET ahead of the ones the resume holds (TestDeadGETResumedFirst
// meets this window only now and then).
func TestResumeHoldsPastNewGET(t *testing.T) {
	s := &session{gen: &generation{}}
	old, _ := s.attachGET(func() {}, nil)
	p := &post{route: routeHeld}
	s.dmu.Lock()
	s.routeToGET(p) // the old GET took them
	s.dmu.Unlock()
	s.detachGET(old)
	s.attachGET(func() {}, nil) // a new one, before the resume is settled
	p.resuming = true
	c := &call{sess: s, post: p}
	if err := s.deliver(c, note{ix: -1}); err != nil {
		t.Fatalf("deliver: %v (sent to the standalone stream)", err)
	}
	if len(c.held) != 1 {
		t.Fatalf("%d notifications held for the resume, want 1", len(c.held))
	}
}
