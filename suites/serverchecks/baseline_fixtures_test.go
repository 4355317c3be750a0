package serverchecks

import (
	"encoding/json"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/sse"
)

// progressValue is a progress notification's progress.
func progressValue(t *testing.T, ev sse.Event) float64 {
	t.Helper()
	m, _ := msg(ev)
	var p struct{ Progress float64 }
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.Progress
}

func TestLastProgressDropped(t *testing.T) {
	t.Parallel()
	tg := serve(t, "last-progress-dropped")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "d", 5, 20)
	evs := post.await("the response", 1, response)
	var got []float64
	last := ""
	for _, ev := range evs {
		if progress("d")(ev) {
			got = append(got, progressValue(t, ev))
			last = ev.ID
		}
	}
	if len(got) != 4 || got[3] != 4 {
		t.Fatalf("progress %v on the POST stream, want 1 to 4: the last one dropped", got)
	}
	// The server stored the dropped one: resuming after the fourth replays it.
	resumed := tg.open(tg.c, sid, last)
	evs = resumed.await("the fifth notification, replayed", 1, progress("d"))
	for _, ev := range evs {
		if progress("d")(ev) && progressValue(t, ev) != 5 {
			t.Fatalf("the resumed stream replays progress %v, want 5", progressValue(t, ev))
		}
	}
}

func TestFirstResumeLosesResponse(t *testing.T) {
	t.Parallel()
	tg := serve(t, "first-resume-loses-response")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "r", 3, 50)
	// From the first notification, not from the last event read: on a
	// busy machine the second may have come too by now, and a resume
	// after it would replay one notification, not the two this counts.
	last := idOf(post.await("the first notification", 1, progress("r")), progress("r"))
	post.Close()
	first := tg.open(tg.c, sid, last)
	first.await("the other two notifications, replayed", 2, progress("r"))
	tg.waitUntil("the first resumed stream to end", first.Ended)
	if n := count(first.Events(), response); n != 0 {
		t.Fatalf("the first resume carried %d responses, want none", n)
	}
	again := tg.open(tg.c, sid, last)
	evs := again.await("the response on the second resume", 1, response)
	if n := count(evs, progress("r")); n != 2 {
		t.Fatalf("the second resume replayed %d notifications, want the 2 missed", n)
	}
}
