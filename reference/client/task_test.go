package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// taskEvents records a client's task lines.
type taskEvents struct {
	mu  sync.Mutex
	evs []client.TaskEvent
}

func (r *taskEvents) add(ev client.TaskEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *taskEvents) statuses() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s []string
	for _, ev := range r.evs {
		s = append(s, ev.Status)
	}
	return strings.Join(s, " ")
}

func isMethod(m string) func(seenRequest) bool {
	return func(r seenRequest) bool { return r.RPC == m }
}

var longArgs = json.RawMessage(`{"steps":1,"interval_ms":1000}`)

// TestTaskSurvivesRestart: the task id is stored as soon as it arrives; a
// client killed while polling and started again polls the same task to
// its result, without creating another, and forgets it then.
func TestTaskSurvivesRestart(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	b := taskRestart(t, e, e.options)
	if _, err := b.ResumeTask(ctx(t)); !errors.Is(err, client.ErrNoTask) {
		t.Fatalf("ResumeTask with nothing stored: %v", err)
	}
}

// taskRestart creates a task with a client from options, kills it while
// it polls, lets the task complete and resumes it with a second client,
// which it returns.
func taskRestart(t *testing.T, e *env, options func(storage.Storage, *recorder) client.Options) *client.Client {
	t.Helper()
	st := storage.NewMemory()
	first := &taskEvents{}
	o := options(st, nil)
	o.OnTask = first.add
	a := e.newClient(o)
	cctx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() { _, err := a.CallToolTask(cctx, "long_operation", longArgs); done <- err }()
	eventually(t, "the task to be created", func() bool { return first.statuses() == "working" })
	rec, ok := a.StoredTask()
	if !ok || rec.Status != "working" || rec.PollMS != 20 {
		t.Fatalf("stored task: %+v %v", rec, ok)
	}
	cancel()
	if err := <-done; !client.IsCancelled(err) {
		t.Fatalf("cancelled poll: %v", err)
	}
	a.Close()
	e.step() // the task completes while no client runs

	second := &taskEvents{}
	o = options(st, nil)
	o.OnTask = second.add
	b := e.newClient(o)
	res, err := b.ResumeTask(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Raw), "completed 1 steps") || res.RequestID != rec.TaskID {
		t.Fatalf("result: %+v %s", res, res.Raw)
	}
	if got := second.statuses(); got != "completed" {
		t.Fatalf("status lines after the restart: %q", got)
	}
	if _, ok := b.StoredTask(); ok {
		t.Fatal("the task is still stored after its result")
	}
	if n := e.reqs.count(isMethod("tools/call long_operation")); n != 1 {
		t.Fatalf("%d tools/call, want the one that created the task", n)
	}
	return b
}

// TestTaskNotRecreated: calling the same tool with the same arguments as a
// task while one is stored polls the stored one.
func TestTaskNotRecreated(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	st := storage.NewMemory()
	a := e.newClient(e.options(st, nil))
	cctx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() { _, err := a.CallToolTask(cctx, "long_operation", longArgs); done <- err }()
	eventually(t, "the task to be stored", func() bool { _, ok := a.StoredTask(); return ok })
	cancel()
	<-done
	a.Close()
	b := e.newClient(e.options(st, nil))
	go e.step()
	if _, err := b.CallToolTask(ctx(t), "long_operation", longArgs); err != nil {
		t.Fatal(err)
	}
	if n := e.reqs.count(isMethod("tools/call long_operation")); n != 1 {
		t.Fatalf("%d tools/call: the stored task was created again", n)
	}
}

// TestTaskPollInterval: tasks/get comes no more often than the task's
// pollInterval.
func TestTaskPollInterval(t *testing.T) {
	poll := 100 * time.Millisecond
	e := newEnv(t, server.Config{TaskPollInterval: poll})
	var mu sync.Mutex
	var gets []time.Time
	o := e.options(storage.NewMemory(), nil)
	o.HTTPClient.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodPost {
			return http.DefaultTransport.RoundTrip(r)
		}
		body, rest := peekMethod(r)
		r.Body = rest
		if body == "tasks/get" {
			mu.Lock()
			gets = append(gets, time.Now())
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c := e.newClient(o)
	done := make(chan error, 1)
	go func() { _, err := c.CallToolTask(ctx(t), "long_operation", longArgs); done <- err }()
	eventually(t, "three polls", func() bool { mu.Lock(); defer mu.Unlock(); return len(gets) >= 3 })
	e.step()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(gets); i++ {
		if gap := gets[i].Sub(gets[i-1]); gap < poll-10*time.Millisecond {
			t.Fatalf("tasks/get %d came %v after the one before; the pollInterval is %v", i, gap, poll)
		}
	}
}

// TestTaskLost: a task the server no longer knows (a restart without a
// durable store) is a TaskLostError, and forgotten.
func TestTaskLost(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	st := storage.NewMemory()
	if err := st.Set(client.KeyTask, `{"task_id":"GONEGONEGONEGONEGONEGONEGO","tool":"long_operation","status":"working"}`); err != nil {
		t.Fatal(err)
	}
	c := e.newClient(e.options(st, nil))
	_, err := c.ResumeTask(ctx(t))
	var lost *client.TaskLostError
	if !errors.As(err, &lost) || lost.TaskID != "GONEGONEGONEGONEGONEGONEGO" {
		t.Fatalf("ResumeTask of an unknown task: %v", err)
	}
	if _, ok := c.StoredTask(); ok {
		t.Fatal("the lost task is still stored")
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
