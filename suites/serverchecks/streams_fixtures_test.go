package serverchecks

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

func TestGetStream202(t *testing.T) {
	t.Parallel()
	tg := serve(t, "get-stream-202")
	sid := tg.connect(tg.c)
	s, err := tg.c.OpenGET(tg.ctx(), sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Resp.StatusCode != http.StatusAccepted {
		t.Fatalf("GET stream: HTTP %d, want 202", s.Resp.StatusCode)
	}
}

func TestResponsesCopiedToGET(t *testing.T) {
	t.Parallel()
	tg := serve(t, "responses-copied-to-get")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list: HTTP %d", got)
	}
	get.await("a response on the GET stream", 1, response)
}

func TestNotificationsBroadcast(t *testing.T) {
	t.Parallel()
	tg := serve(t, "notifications-broadcast")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	post := tg.call(tg.c, sid, "b", 2, 0)
	post.await("the response", 1, response)
	if n := count(post.Events(), progress("b")); n != 2 {
		t.Fatalf("%d progress notifications on the POST stream, want 2", n)
	}
	get.await("the same notifications on the GET stream", 2, progress("b"))
}

func TestFirstNoteOnGET(t *testing.T) {
	t.Parallel()
	tg := serve(t, "first-note-on-get")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	tg.await(get, "the priming event", 1)
	post := tg.call(tg.c, sid, "f", 3, 0)
	post.await("the response", 1, response)
	if n := count(post.Events(), progress("f")); n != 2 {
		t.Fatalf("%d progress notifications on the POST stream, want 2 (the last two)", n)
	}
	get.await("the call's first notification on the GET stream", 1, progress("f"))
}

func TestPOSTPrimingIDReused(t *testing.T) {
	t.Parallel()
	tg := serve(t, "post-priming-id-reused")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	evs := tg.await(get, "the priming event", 1)
	post := tg.call(tg.c, sid, "p", 1, 0)
	post.await("the response", 1, response)
	if g, p := evs[0].ID, post.Events()[0].ID; g != "_0" || p != g {
		t.Fatalf("priming ids: GET %q, POST %q; want both _0", g, p)
	}
}

// The fixture is wrong only for calls that arrive together.
func TestPrimingIDsRaced(t *testing.T) {
	t.Parallel()
	tg := serve(t, "priming-ids-raced")
	sid := tg.connect(tg.c)
	first := func(st *stream) string { return st.await("the response", 1, response)[0].ID }
	a := tg.call(tg.c, sid, "a", 1, 0)
	b := tg.call(tg.c, sid, "b", 1, 0) // sent once a's stream has opened
	if ia, ib := first(a), first(b); ia == ib {
		t.Fatalf("calls one after another share the priming id %q", ia)
	}
	opened := make([]*wire.Stream, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range opened {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := tg.c.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 1, "interval_ms": 0}, fmt.Sprint("t", i)))
			opened[i], errs[i] = tg.c.OpenPOST(tg.ctx(), sid, body)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if ic, id := first(tg.read(opened[0])), first(tg.read(opened[1])); ic != id {
		t.Fatalf("calls sent together got priming ids %q and %q; want one shared", ic, id)
	}
}

func TestPOSTStreamsUnprimed(t *testing.T) {
	t.Parallel()
	tg := serve(t, "post-streams-unprimed")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "u", 1, 0)
	evs := post.await("the response", 1, response)
	if strings.TrimSpace(evs[0].Data) == "" {
		t.Fatalf("the POST stream opens with an empty event %+v", evs[0])
	}
}

func TestGETStreamsUnprimed(t *testing.T) {
	t.Parallel()
	tg := serve(t, "get-streams-unprimed")
	sid := tg.connect(tg.c)
	get := tg.open(tg.c, sid, "")
	post := tg.call(tg.c, sid, "g", 4, 50)
	post.await("a notification", 1, progress("g"))
	if first := post.Events()[0]; !first.HasID || strings.TrimSpace(first.Data) != "" {
		t.Fatalf("the POST stream opens with %+v, not a priming event", first)
	}
	post.Close() // the rest go to the GET stream
	evs := get.await("a cut call's notification on the GET stream", 1, progress("g"))
	if strings.TrimSpace(evs[0].Data) == "" {
		t.Fatalf("the GET stream opens with an empty event %+v", evs[0])
	}
}

func TestRetryStripped(t *testing.T) {
	t.Parallel()
	tg := serve(t, "retry-stripped")
	sid := tg.connect(tg.c)
	first := tg.open(tg.c, sid, "")
	tg.await(first, "the priming event", 1)
	tg.open(tg.c, sid, "")
	tg.waitUntil("the first GET stream to end", first.endedCleanly)
	for _, ev := range first.Events() {
		if ev.HasRetry {
			t.Fatalf("the replaced stream carried a retry field: %+v", ev)
		}
	}
}

func TestConflictSecondGET(t *testing.T) {
	t.Parallel()
	tg := serve(t, "conflict-second-get")
	sid := tg.connect(tg.c)
	first := tg.open(tg.c, sid, "")
	tg.await(first, "the priming event", 1)
	_, err := tg.c.OpenGET(tg.ctx(), sid, "")
	if se := new(wire.StatusError); !errors.As(err, &se) || se.Status != http.StatusConflict {
		t.Fatalf("second GET: %v, want HTTP 409", err)
	}
}

func TestReplacedGETHeldOpen(t *testing.T) {
	t.Parallel()
	tg := serve(t, "replaced-get-held-open")
	sid := tg.connect(tg.c)
	first := tg.open(tg.c, sid, "")
	tg.await(first, "the priming event", 1)
	tg.open(tg.c, sid, "")
	first.await("the retry field", 1, func(ev sse.Event) bool { return ev.HasRetry })
	// The reference has let go of the first stream: only the second is in flight.
	tg.waitUntil("the reference to end the first stream", func() bool { return tg.srv.InFlight() == 1 })
	end := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(end) {
		if first.Ended() {
			t.Fatal("the replaced stream's connection was closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDisconnectCancels(t *testing.T) {
	t.Parallel()
	tg := serve(t, "disconnect-cancels")
	sid := tg.connect(tg.c)
	post := tg.call(tg.c, sid, "c", 50, 100)
	post.await("the first notification", 1, progress("c"))
	last := post.LastID()
	post.Close()
	resumed := tg.open(tg.c, sid, last)
	evs := resumed.await("the response", 1, response)
	for _, ev := range evs {
		if m, ok := msg(ev); ok && m.IsResponse() {
			if _, err := wire.ResultText(m.Result); m.Error == nil && err == nil {
				t.Fatalf("the call completed (%s); want it cancelled", ev.Data)
			}
		}
	}
}

// TestCutNotesParked: resumed at once, a cut POST stream carries every
// notification of its call; resumed once the server has noticed the cut
// and sent some, it lacks those, which a later GET stream gets instead.
func TestCutNotesParked(t *testing.T) {
	t.Parallel()
	tg := serve(t, "cut-notes-parked")
	// cut calls the tool (steps notifications, the first intervalMS after
	// the call, the next intervalMS apart), cuts its POST stream after the
	// first and resumes it after wait. It returns both streams and when the
	// resume's headers came, counted from just before the call was sent.
	cut := func(token string, steps, intervalMS int, wait time.Duration) (post, resumed *stream, sid string, resumedAt time.Duration) {
		sid = tg.connect(tg.c)
		began := time.Now()
		post = tg.call(tg.c, sid, token, steps, intervalMS)
		post.await("the first notification", 1, progress(token))
		last := post.LastID()
		post.Close()
		time.Sleep(wait) // no stream: notifications the server sends meanwhile are parked
		resumed = tg.open(tg.c, sid, last)
		resumedAt = time.Since(began)
		resumed.await("the response", 1, response)
		return post, resumed, sid, resumedAt
	}

	// "At once" holds only if the resume reaches the server before the
	// call's second notification, which it sends no sooner than two
	// intervals after the test sent the call: the server's clock starts
	// later. The server takes the resume over just after it sends the
	// headers, so only a resume whose headers came half an interval before
	// that can fail the fixture; one the test itself was slow to make (a
	// busy machine) proves nothing either way and is made again, on a new
	// session. A long interval leaves the test that half interval to see
	// the first notification, cut the stream and resume it.
	const nowSteps, nowInterval = 3, 1000
	inTime := time.Duration(2*nowInterval-nowInterval/2) * time.Millisecond
	for try := 1; ; try++ {
		token := fmt.Sprintf("now-%d", try)
		post, resumed, _, at := cut(token, nowSteps, nowInterval, 0)
		got := count(post.Events(), progress(token)) + count(resumed.Events(), progress(token))
		if got == nowSteps {
			break
		}
		if at < inTime {
			t.Fatalf("resumed at once (headers %v after the call was sent, its second notification due no sooner than %v): %d notifications on the POST stream and its resume, want all %d", at, 2*nowInterval*time.Millisecond, got, nowSteps)
		}
		if try == 3 {
			t.Logf("resumed at once: not observed; the test's own resume came too late in each of %d tries (the last %v after the call was sent, in time before %v)", try, at, inTime)
			break
		}
	}

	const steps, interval = 6, 200
	post, resumed, sid, _ := cut("late", steps, interval, 5*interval*time.Millisecond)
	onPOST := count(post.Events(), progress("late")) + count(resumed.Events(), progress("late"))
	if onPOST >= steps {
		t.Fatalf("resumed late: all %d notifications on the POST stream and its resume; want those sent meanwhile missing", onPOST)
	}
	get := tg.open(tg.c, sid, "")
	get.await("the parked notifications on a later GET stream", steps-onPOST, progress("late"))
}

// await waits for n events of any kind on st.
func (tg *fixtureServer) await(st *stream, what string, n int) []sse.Event {
	tg.t.Helper()
	return st.await(what, n, func(sse.Event) bool { return true })
}

func TestReplacementGETDeaf(t *testing.T) {
	t.Parallel()
	tg := serve(t, "replacement-get-deaf")
	sid, control := tg.connect(tg.c), tg.connect(tg.c)
	first := tg.open(tg.c, sid, "")
	tg.await(first, "the priming event", 1)
	second := tg.open(tg.c, sid, "")
	tg.await(second, "the priming event", 1)
	tg.waitUntil("the replaced GET stream to end", first.Ended)
	controlGET := tg.open(tg.c, control, "")
	tg.await(controlGET, "the priming event", 1)
	post := tg.call(tg.c, sid, "d", 4, 50)
	controlPost := tg.call(tg.c, control, "c", 4, 50)
	post.await("the first notification", 1, progress("d"))
	controlPost.await("the first notification", 1, progress("c"))
	post.Close() // the rest goes to the standalone stream
	controlPost.Close()
	controlGET.await("the control call's later notifications", 1, progress("c"))
	if n := count(second.Events(), progress("d")); n > 0 {
		t.Fatalf("the GET stream that replaced another got %d of the cut call's notifications; want none", n)
	}
}
