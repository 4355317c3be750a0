package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestResumeCallAfterRestart: a client is closed in the middle of a call
// (the page goes away; no DELETE, no cancel), steps run with nobody there,
// and a new client on the same storage rejoins the same session and
// ResumeCall delivers the remaining notifications once, then the result.
func TestResumeCallAfterRestart(t *testing.T) {
	for _, mode := range []client.ReconnectMode{client.Auto, client.Reuse} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, server.Config{})
			st := storage.NewMemory()
			first := &recorder{}
			o := e.options(st, first)
			o.Reconnect = mode
			a := e.newClient(o)
			sid := a.SessionID()
			done := make(chan error, 1)
			go func() {
				_, err := a.CallTool(ctx(t), "long_operation", map[string]any{"steps": 4, "interval_ms": 1000})
				done <- err
			}()
			e.step()
			eventually(t, "step 1", func() bool { return first.count() == 2 })
			a.Close()
			if err := <-done; !errors.Is(err, client.ErrClosed) {
				t.Fatalf("call on a closed client: %v", err)
			}
			eventually(t, "the server to notice", func() bool { return e.srv.InFlight() == 0 })
			e.step()
			e.step()

			second := &recorder{}
			o = e.options(st, second)
			o.Reconnect = mode
			b := e.newClient(o)
			if b.SessionID() != sid {
				t.Fatalf("session %s, want %s", b.SessionID(), sid)
			}
			res := make(chan *client.ToolResult, 1)
			go func() {
				r, err := b.ResumeCall(ctx(t))
				if err != nil {
					t.Errorf("ResumeCall: %v", err)
				}
				res <- r
			}()
			eventually(t, "steps 2 and 3", func() bool { return second.count() == 4 })
			e.step()
			eventually(t, "step 4 "+second.steps(), func() bool { return second.count() == 6 })
			r := <-res
			if r == nil {
				t.FailNow()
			}
			if got := first.steps() + " | " + second.steps(); got != "p1 l1 | p2 l2 p3 l3 p4 l4" {
				t.Fatalf("notifications %s", got)
			}
			if !strings.Contains(string(r.Raw), "completed 4 steps") {
				t.Fatalf("result %s", r.Raw)
			}
			if got := first.trail() + " | " + second.trail(); got != "connecting connected disconnected | reconnecting connected(reconnected)" {
				t.Fatalf("status trails %s", got)
			}
		})
	}
}

// TestResumeAfterCut covers CLI-RESUME within one client: every TCP
// connection is cut in the middle of a call; the call's stream is resumed
// with Last-Event-ID, the GET stream reopened, and each notification is
// handed over once, then the result.
func TestResumeAfterCut(t *testing.T) {
	e := newEnv(t, server.Config{})
	rec := &recorder{}
	c := e.newClient(e.options(nil, rec))
	res := make(chan *client.ToolResult, 1)
	go func() {
		r, err := c.CallTool(ctx(t), "long_operation", map[string]any{"steps": 3, "interval_ms": 1000})
		if err != nil {
			t.Errorf("CallTool: %v", err)
		}
		res <- r
	}()
	e.step()
	eventually(t, "step 1", func() bool { return rec.count() == 2 })
	lastSeen := rec.eventIDs()[1]
	e.conns.CutAll()
	e.step()
	e.step()
	r := <-res
	if r == nil {
		t.FailNow()
	}
	if got := sortedSteps(rec); got != "l1 l2 l3 p1 p2 p3" {
		t.Fatalf("notifications %s, want each step once", rec.steps())
	}
	if n := e.reqs.count(func(r seenRequest) bool { return r.Method == http.MethodGet && r.LastEventID == lastSeen }); n == 0 {
		t.Fatalf("no GET resumed the call's stream after %s", lastSeen)
	}
	if !strings.Contains(string(r.Raw), "completed 3 steps") {
		t.Fatalf("result %s", r.Raw)
	}
}

func sortedSteps(r *recorder) string {
	parts := strings.Fields(r.steps())
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// TestDedupe: a server that replays events the client already handled (it
// ignores Last-Event-ID) does not get them handed over twice.
func TestDedupe(t *testing.T) {
	s := newScripted(t)
	var callID atomic.Value
	s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		callID.Store(string(id))
		sseHeader(w)
		sseEvent(w, "c0", "")
		sseEvent(w, "c1", progressJSON(1))
		sseEvent(w, "c2", progressJSON(2))
		return true // cut before the response
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") == "" {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		sseHeader(w)
		for i := 1; i <= 3; i++ { // everything again, then one more
			sseEvent(w, fmt.Sprintf("c%d", i), progressJSON(i))
		}
		sseEvent(w, "c4", `{"jsonrpc":"2.0","id":`+callID.Load().(string)+`,"result":{"content":[]}}`)
	}
	rec := &recorder{}
	c := connectTo(t, s.options(rec))
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.eventIDs(), " "); got != "c1 c2 c3" {
		t.Fatalf("handed over %s, want c1 c2 c3 once each", got)
	}
	resumes := s.requests(func(r seenRequest) bool { return r.Method == http.MethodGet && r.LastEventID != "" })
	if len(resumes) != 1 || resumes[0].LastEventID != "c2" {
		t.Fatalf("resumes %+v, want one after c2", resumes)
	}
}

// TestRetryField covers CLI-RETRY-FIELD on both kinds of stream: after a
// stream that carried a retry field ends, the client reconnects exactly
// that long later (on its clock), not before.
func TestRetryField(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		s := newScripted(t)
		s.get = func(w http.ResponseWriter, r *http.Request) {
			sseHeader(w)
			if r.Header.Get("Last-Event-ID") == "" {
				sseEvent(w, "e1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
				fmt.Fprint(w, "retry: 300\n\n")
				return
			}
			<-r.Context().Done()
		}
		fc := clocktesting.NewFakeClock(time.Now())
		rec := &recorder{}
		o := s.options(rec)
		o.Clock = fc
		connectTo(t, o)
		gets := func() []seenRequest {
			return s.requests(func(r seenRequest) bool { return r.Method == http.MethodGet })
		}
		eventually(t, "the first stream to end", func() bool { return rec.count() == 1 && fc.HasWaiters() })
		fc.Step(299 * time.Millisecond)
		if !fc.HasWaiters() || len(gets()) != 1 {
			t.Fatalf("reconnected before the server's retry delay (%d GETs)", len(gets()))
		}
		fc.Step(time.Millisecond)
		eventually(t, "the second GET", func() bool { return len(gets()) == 2 })
		if got := gets()[1].LastEventID; got != "e1" {
			t.Fatalf("second GET after %q, want e1", got)
		}
	})
	t.Run("call", func(t *testing.T) {
		s := newScripted(t)
		var callID atomic.Value
		s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
			if method != "tools/call" {
				return false
			}
			callID.Store(string(id))
			sseHeader(w)
			sseEvent(w, "c0", "")
			fmt.Fprint(w, "retry: 250\n\n")
			return true
		}
		s.get = func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Last-Event-ID") != "c0" {
				http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
				return
			}
			sseHeader(w)
			sseEvent(w, "c1", `{"jsonrpc":"2.0","id":`+callID.Load().(string)+`,"result":{"content":[]}}`)
		}
		fc := clocktesting.NewFakeClock(time.Now())
		o := s.options(nil)
		o.Clock = fc
		c := connectTo(t, o)
		done := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx(t), "t", nil)
			done <- err
		}()
		resumes := func() int {
			return len(s.requests(func(r seenRequest) bool { return r.LastEventID == "c0" }))
		}
		eventually(t, "the call's stream to end", fc.HasWaiters)
		fc.Step(249 * time.Millisecond)
		if !fc.HasWaiters() || resumes() != 0 {
			t.Fatal("resumed before the server's retry delay")
		}
		fc.Step(time.Millisecond)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if resumes() != 1 {
			t.Fatalf("%d resumes, want 1", resumes())
		}
	})
}

// TestResumeCallLost: the call's session expired while no client was
// there. The new client starts a new session (CLI-FALLBACK) and reports the
// call as lost rather than running it again.
func TestResumeCallLost(t *testing.T) {
	e := newEnv(t, server.Config{})
	st := storage.NewMemory()
	rec := &recorder{}
	a := e.newClient(e.options(st, rec))
	// Steps a minute apart: no step runs while expire moves the clock (the
	// event store reads the fake clock under its lock, which a grace
	// expiry, run under the clock's lock, needs).
	go a.CallTool(ctx(t), "long_operation", map[string]any{"steps": 3, "interval_ms": 60000})
	eventually(t, "a step timer", e.clock.HasWaiters)
	e.clock.Step(time.Minute)
	eventually(t, "step 1", func() bool { return rec.count() == 2 })
	a.Close()
	e.expire()
	b := e.newClient(e.options(st, nil))
	_, err := b.ResumeCall(ctx(t))
	var lost *client.CallLostError
	if !errors.As(err, &lost) || lost.Tool != "long_operation" {
		t.Fatalf("ResumeCall: %v, want the call reported lost", err)
	}
	if len(b.InFlight()) != 0 {
		t.Fatal("the lost call is still stored")
	}
	if _, err := b.ResumeCall(ctx(t)); !errors.Is(err, client.ErrNothingToResume) {
		t.Fatalf("second ResumeCall: %v", err)
	}
}

// TestResumeCallHint covers the envelope's resume hint across a restart:
// the process died in the middle of job_start, the session expired, and the
// new client issues job_start again with the stored resume token, so the
// conversation goes on (CLI-ENVELOPE).
func TestResumeCallHint(t *testing.T) {
	e := newEnv(t, server.Config{})
	st := storage.NewMemory()
	a := e.newClient(e.options(st, nil))
	first := runJob(t, a, map[string]any{"steps": 1, "interval_ms": 0})
	// What a process killed right after sending job_start leaves behind.
	interrupted := map[string]client.InFlightCall{"dead-1": {
		RequestID: "dead-1", Tool: "job_start", Arguments: json.RawMessage(`{"steps":1,"interval_ms":0}`),
		ProgressToken: "p-dead-1", SessionID: a.SessionID(), Started: time.Now(),
	}}
	a.Close()
	data, _ := json.Marshal(interrupted)
	st.Set(client.KeyInFlight, string(data))
	e.expire()

	b := e.newClient(e.options(st, nil))
	r, err := b.ResumeCall(ctx(t))
	if err != nil {
		t.Fatalf("ResumeCall: %v", err)
	}
	var started struct {
		JobID string `json:"job_id"`
	}
	json.Unmarshal(structured(t, r), &started)
	var snap jobSnapshot
	eventually(t, "the job", func() bool {
		g, err := b.CallTool(ctx(t), "job_get", map[string]any{"job_id": started.JobID})
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(structured(t, g), &snap)
		return snap.Status == "completed"
	})
	if snap.ConversationID != first.ConversationID || snap.Turn != 2 {
		t.Fatalf("re-issued job %+v, want turn 2 of %s", snap, first.ConversationID)
	}
}

// TestConnectAfterShortGET: Connect returns once the standalone stream has
// been open, even when it ended before Connect looked (a server that sends
// one event and a retry field, then closes): it does not wait for a timer
// of its clock, which here never fires.
func TestConnectAfterShortGET(t *testing.T) {
	for range 20 {
		s := newScripted(t)
		s.get = func(w http.ResponseWriter, r *http.Request) {
			sseHeader(w)
			sseEvent(w, "e1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)
			fmt.Fprint(w, "retry: 300\n\n")
		}
		o := s.options(nil)
		o.Clock = clocktesting.NewFakeClock(time.Now())
		c, err := client.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = c.Connect(ctx)
		late := ctx.Err()
		cancel()
		c.Close()
		if err != nil || late != nil {
			t.Fatalf("Connect: %v (its context: %v): it waited for a stream that had come and gone", err, late)
		}
	}
}
