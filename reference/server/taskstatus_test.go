package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// taskStatusOn reads st until a notifications/tasks/status arrives and
// returns its task; any other message first fails the test. The stream
// read is bounded by the client's context.
func taskStatusOn(t *testing.T, st *wire.Stream) (taskWire, bool) {
	t.Helper()
	for {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("GET stream: %v", err)
		}
		if ev.Data == "" {
			continue
		}
		var m struct {
			Method string   `json:"method"`
			Params taskWire `json:"params"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || m.Method != "notifications/tasks/status" {
			t.Fatalf("GET stream: want notifications/tasks/status, got %q (%v)", ev.Data, err)
		}
		return m.Params, ev.HasID
	}
}

// expectTaskStatus waits for tk's status notification on st.
func (e *env) expectTaskStatus(st *wire.Stream, tk taskWire, status string) {
	e.t.Helper()
	expectTaskStatus(e.t, st, tk.TaskID, status)
}

func expectTaskStatus(t *testing.T, st *wire.Stream, id, status string) {
	t.Helper()
	got, hasID := taskStatusOn(t, st)
	if got.TaskID != id || got.Status != status || got.CreatedAt == "" || got.TTL <= 0 || got.PollInterval <= 0 {
		t.Fatalf("task status notification %+v, want task %s %s", got, id, status)
	}
	if hasID {
		t.Fatal("task status notification carries an event id; it is not replayable and must not move the resume cursor")
	}
}

// TestTaskStatusNotification: the creating session's GET gets the task's
// terminal status; another session of the same principal and another
// principal get nothing of it (their first notification is their own
// task's); a cancel is notified; with no GET the task still completes and
// a later GET is not sent the missed notification.
func TestTaskStatusNotification(t *testing.T) {
	e, alice, mallory := twoPrincipalsWith(t, noKeepAlive) // keep-alive timers would be step waiters too
	asid, a2sid, msid := e.connect(alice), e.connect(alice), e.connect(mallory)
	aGET, a2GET, mGET := e.openGET(alice, asid, ""), e.openGET(alice, a2sid, ""), e.openGET(mallory, msid, "")

	tk := e.createTask(alice, asid, 1, 1000, nil)
	e.step()
	e.expectTaskStatus(aGET, tk, "completed")

	cancelled := func(c *wire.Client, sid string, st *wire.Stream) {
		t.Helper()
		own := e.createTask(c, sid, 1, 1000, nil)
		if got := e.task(e.rpc(c, sid, "tasks/cancel", map[string]any{"taskId": own.TaskID})); got.Status != "cancelled" {
			t.Fatalf("tasks/cancel: %+v", got)
		}
		e.expectTaskStatus(st, own, "cancelled")
	}
	cancelled(alice, a2sid, a2GET)
	cancelled(mallory, msid, mGET)

	// No GET: nothing is sent, the task completes as ever.
	bsid := e.connect(alice)
	tb := e.createTask(alice, bsid, 1, 1000, nil)
	e.step()
	if m := e.rpc(alice, bsid, "tasks/result", map[string]any{"taskId": tb.TaskID}); m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") {
		t.Fatalf("tasks/result without a GET: %+v %s", m.Error, m.Result)
	}
	bGET := e.openGET(alice, bsid, "")
	cancelled(alice, bsid, bGET)
}

// TestTaskStatusNotificationOnRedis: with a shared store, the replica
// running the task sends its status on the GET it holds, a cancel decided
// on another replica included.
func TestTaskStatusNotificationOnRedis(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	get, err := a.OpenGET(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { get.Close() })
	if prime, err := get.Next(); err != nil || !prime.HasID || prime.Data != "" {
		t.Fatalf("priming event: %+v %v", prime, err)
	}
	expectTaskStatus(t, get, replicaCreate(t, a, sid, 1, 0), "completed")
	long := replicaCreate(t, a, sid, 100, 100)
	if got := replicaTaskOf(t, "tasks/cancel on B", replicaTask(t, b, sid, "tasks/cancel", map[string]any{"taskId": long})); got.Status != "cancelled" {
		t.Fatalf("tasks/cancel on B: %+v", got)
	}
	expectTaskStatus(t, get, long, "cancelled")
}
