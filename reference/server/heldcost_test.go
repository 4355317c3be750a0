package server_test

import "testing"

// TestHeldNotesCharged: the notifications a server holds while a call's
// stream is cut and no GET is connected are charged to --event-max-bytes
// with what the replay store keeps: the total stays within it however many
// pile up (past it they are stored instead, the oldest evicted), and they
// are given back once a stream takes them.
func TestHeldNotesCharged(t *testing.T) {
	const maxBytes = 4096
	cfg := noKeepAlive
	cfg.EventMaxBytes = maxBytes
	e := newEnv(t, cfg)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 40)
	e.step()
	next(t, post, 2)
	c := e.refresh()
	var held int64
	for range 39 {
		e.step()
		st := e.srv.EventStats()
		if st.Cost > maxBytes {
			t.Fatalf("replay store and held notifications cost %d, more than %d: %+v", st.Cost, maxBytes, st)
		}
		held = max(held, st.Held)
	}
	if held == 0 {
		t.Fatal("held notifications were never charged")
	}
	get := e.openGET(c, sid, "")
	defer get.Close()
	eventually(t, "the held notifications given back", func() bool { return e.srv.EventStats().Held == 0 })
	t.Logf("most held at once: %d bytes of %d", held, maxBytes)
}
