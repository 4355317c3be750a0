package serverchecks

import "testing"

func TestNotificationsOnFirstStream(t *testing.T) {
	t.Parallel()
	tg := serve(t, "notifications-on-first-stream")
	sid := tg.connect(tg.c)
	a := tg.call(tg.c, sid, "a", 20, 50)
	a.await("the first call's first notification", 1, progress("a"))
	b := tg.call(tg.c, sid, "b", 2, 0) // done while the first call runs
	evs := b.await("the second call's response", 1, response)
	if n := count(evs, progress("b")); n != 0 {
		t.Fatalf("%d of the second call's notifications on its own POST stream, want 0", n)
	}
	a.await("the second call's notifications on the first call's stream", 2, progress("b"))
	evs = a.await("the first call's response", 1, response)
	if n := count(evs, progress("a")); n != 20 {
		t.Fatalf("%d of the first call's notifications on its POST stream, want 20", n)
	}
	for _, ev := range evs {
		if progress("b")(ev) && ev.ID != "" {
			t.Fatalf("a moved notification has event id %q; it belongs to no stream's history", ev.ID)
		}
	}
}
