package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// outageBound is how long any request may take while the store is out of
// reach: one store operation's timeout (5 s, a stopped Redis) and a margin
// for a loaded machine. Once a replica knows the store is down it answers
// at once.
const outageBound = 7 * time.Second

// knownDown bounds a request once its replica knows the store is out of
// reach: no store operation waits then (the margin is the loaded machine's).
const knownDown = 2 * time.Second

// keeper uses sessions on the replicas that hold them all through a test,
// so that they stay active, and records every answer.
type keeper struct {
	mu      sync.Mutex
	gone    []string // 404 answers: a live session told it is gone
	slowest time.Duration
	calls   int
	stop    chan struct{}
	wg      sync.WaitGroup
}

func keep(t *testing.T, pairs map[string]*wire.Client) *keeper {
	k := &keeper{stop: make(chan struct{})}
	for sid, c := range pairs {
		k.wg.Go(func() {
			tick := time.NewTicker(150 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-k.stop:
					return
				case <-tick.C:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*outageBound)
				start := time.Now()
				resp, err := c.Call(ctx, sid, "tools/list", map[string]any{})
				took := time.Since(start)
				cancel()
				k.mu.Lock()
				k.calls++
				k.slowest = max(k.slowest, took)
				if err == nil && resp.Status == http.StatusNotFound {
					k.gone = append(k.gone, sid+": "+string(resp.Body))
				}
				k.mu.Unlock()
			}
		})
	}
	t.Cleanup(k.end)
	return k
}

func (k *keeper) end() {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
	k.wg.Wait()
}

// check fails the test if a kept session was told it is gone or a request
// took longer than outageBound.
func (k *keeper) check(t *testing.T, phase string) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.gone) > 0 {
		t.Fatalf("%s: live sessions answered 404: %v", phase, k.gone)
	}
	if k.slowest > outageBound {
		t.Fatalf("%s: a request of a held session took %v, more than %v", phase, k.slowest, outageBound)
	}
	t.Logf("%s: %d requests of held sessions, slowest %v", phase, k.calls, k.slowest)
}

// probe is one request sent while the store is out of reach.
type probe struct {
	what   string
	status int // what it must get
	send   func(ctx context.Context) (*wire.Response, error)
}

// runProbes sends each probe at once and checks its answer: its status,
// within bound; a 503 with Retry-After and a JSON-RPC error that names the
// session store.
func runProbes(t *testing.T, phase string, bound time.Duration, probes []probe) {
	t.Helper()
	type result struct {
		resp *wire.Response
		err  error
		took time.Duration
	}
	results := make([]result, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*outageBound)
			defer cancel()
			start := time.Now()
			resp, err := p.send(ctx)
			results[i] = result{resp, err, time.Since(start)}
		})
	}
	wg.Wait()
	for i, p := range probes {
		r := results[i]
		if r.err != nil {
			t.Errorf("%s, %s: %v after %v", phase, p.what, r.err, r.took)
			continue
		}
		t.Logf("%s, %s: HTTP %d after %v", phase, p.what, r.resp.Status, r.took.Round(time.Millisecond))
		if r.resp.Status != p.status || r.took > bound {
			t.Errorf("%s, %s: HTTP %d after %v %.300s; want %d within %v", phase, p.what, r.resp.Status, r.took, r.resp.Body, p.status, bound)
			continue
		}
		if p.status != http.StatusServiceUnavailable {
			continue
		}
		var m struct {
			Error *struct {
				Code    int
				Message string
			}
		}
		if r.resp.Header.Get("Retry-After") == "" || json.Unmarshal(r.resp.Body, &m) != nil || m.Error == nil || !strings.Contains(m.Error.Message, "session store unavailable") {
			t.Errorf("%s, %s: 503 %q %s; want Retry-After and a JSON-RPC error naming the session store", phase, p.what, r.resp.Header.Get("Retry-After"), r.resp.Body)
		}
	}
}

// TestStoreOutage: while the Redis of two replicas is killed (then
// restarted) and stopped (SIGSTOP, then SIGCONT), no live session is told
// it is gone: each replica serves its own sessions and the tasks it runs
// from memory, within one store timeout, and answers everything that needs
// the store 503 with Retry-After; once Redis is back every session, its
// counter and every task are there on both replicas, none expired or
// failed for the outage.
func TestStoreOutage(t *testing.T) {
	// Beside the package's other tests: it mostly waits out outages on a
	// Redis of its own.
	t.Parallel()
	rsrv := redistest.StartWith(t, redistest.Options{Persist: true})
	cfg := replicaConfig()
	rs := replicasOn(t, rsrv, 2, cfg)
	// The test's requests share one context, a guard against a hang, not
	// a bound on the server: three outages, each watched past the idle
	// threshold and the grace period, outlast testCtx's 20 s on a busy
	// machine (the bounds that grade the server are outageBound and
	// knownDown, per request).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a, b := rs[0].client(t), rs[1].client(t)

	shared := connectOn(t, ctx, a) // held by both replicas
	if _, err := b.ToolText(ctx, shared, "counter_increment", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	onlyB := connectOn(t, ctx, b)
	longTask := replicaCreate(t, a, shared, 300, 100) // runs on A all through
	jobText, err := a.ToolText(ctx, shared, "job_start", map[string]any{"steps": 1, "interval_ms": 0})
	var job struct {
		JobID string `json:"job_id"`
	}
	if err != nil || json.Unmarshal([]byte(jobText), &job) != nil || job.JobID == "" {
		t.Fatalf("job_start: %q %v", jobText, err)
	}
	k := keep(t, map[string]*wire.Client{shared: a, onlyB: b})

	// Each phase needs an id B has never served, and a task A finishes
	// while the store is out of reach.
	phase := func(name string, cut func(), restore func()) {
		notOnB := connectOn(t, ctx, a)
		if _, err := a.ToolText(ctx, notOnB, "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		shortTask := replicaCreate(t, a, shared, 1, 1500)
		cut()
		probes := []probe{
			{"tools/list on A of a session A holds", http.StatusOK, func(ctx context.Context) (*wire.Response, error) {
				return a.Call(ctx, shared, "tools/list", map[string]any{})
			}},
			{"tools/list on B of a session only A holds", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return b.Call(ctx, notOnB, "tools/list", map[string]any{})
			}},
			{"tasks/get on A of the task A runs", http.StatusOK, func(ctx context.Context) (*wire.Response, error) {
				return a.Call(ctx, shared, "tasks/get", map[string]any{"taskId": longTask})
			}},
			{"tasks/get on B of the task A runs", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return b.Call(ctx, shared, "tasks/get", map[string]any{"taskId": longTask})
			}},
			{"job_get on A of the job A ran", http.StatusOK, func(ctx context.Context) (*wire.Response, error) {
				return a.Call(ctx, shared, "tools/call", wire.ToolParams("job_get", map[string]any{"job_id": job.JobID}, ""))
			}},
			{"job_get on B of the job A ran", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return b.Call(ctx, shared, "tools/call", wire.ToolParams("job_get", map[string]any{"job_id": job.JobID}, ""))
			}},
			{"re-initialize on A of a session A holds", http.StatusOK, func(ctx context.Context) (*wire.Response, error) {
				return a.Initialize(ctx, shared)
			}},
			{"initialize on A", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return a.Initialize(ctx, "")
			}},
			{"counter_increment on A", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return a.Call(ctx, shared, "tools/call", wire.ToolParams("counter_increment", map[string]any{}, ""))
			}},
			{"DELETE on A of a session A holds", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				return a.Delete(ctx, shared)
			}},
			{"standalone GET on B", http.StatusServiceUnavailable, func(ctx context.Context) (*wire.Response, error) {
				req, err := b.NewHTTPRequest(ctx, http.MethodGet, onlyB, nil)
				if err != nil {
					return nil, err
				}
				return b.Do(req)
			}},
		}
		runProbes(t, name, outageBound, probes)
		// The replicas know the store is down now: no request waits.
		runProbes(t, name+", again", knownDown, probes)
		// A finishes the short task while the store is out of reach, and
		// answers its result from memory.
		m := replicaTask(t, a, shared, "tasks/result", map[string]any{"taskId": shortTask})
		if m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") {
			t.Fatalf("%s: tasks/result on A during the outage: %+v %s", name, m.Error, m.Result)
		}
		restore()
		// Each replica finds Redis back by itself, within a probe.
		eventually(t, "each replica to serve a session it never held", func() bool {
			rb, errB := b.Call(ctx, notOnB, "tools/list", map[string]any{})
			ra, errA := a.Call(ctx, onlyB, "tools/list", map[string]any{})
			return errA == nil && errB == nil && ra.Status == http.StatusOK && rb.Status == http.StatusOK
		})
		k.check(t, name)
		// Everything is there, on both replicas, also once the leases
		// and the idle threshold the outage may have lapsed are past.
		window := time.NewTimer(cfg.IdleThreshold + cfg.GracePeriod + 2*time.Second)
		defer window.Stop()
		pace := time.NewTicker(100 * time.Millisecond)
		defer pace.Stop()
		for watching := true; watching; {
			select {
			case <-window.C:
				watching = false
			case <-pace.C:
			}
			for _, c := range []*wire.Client{a, b} {
				for _, sid := range []string{shared, onlyB} {
					if resp, err := c.Call(ctx, sid, "tools/list", map[string]any{}); err != nil || resp.Status != http.StatusOK {
						t.Fatalf("%s: after the outage, session %s: %v %v", name, sid, resp, err)
					}
				}
				got := replicaTaskOf(t, "the long task after the outage", replicaTask(t, c, shared, "tasks/get", map[string]any{"taskId": longTask}))
				if got.Status != "working" {
					t.Fatalf("%s: the task running on A through the outage is %q", name, got.Status)
				}
			}
		}
		m = replicaTask(t, b, shared, "tasks/result", map[string]any{"taskId": shortTask})
		if m.Error != nil || !strings.Contains(string(m.Result), "completed 1 steps") || !strings.Contains(string(m.Result), tasks.RelatedTaskMeta) {
			t.Fatalf("%s: tasks/result on B of the task A finished in the outage: %+v %s", name, m.Error, m.Result)
		}
		if _, err := b.ToolText(ctx, shared, "counter_increment", map[string]any{}); err != nil {
			t.Fatalf("%s: counter after the outage: %v", name, err)
		}
	}
	phase("Redis killed", rsrv.Kill, func() {
		if err := rsrv.Restart(); err != nil {
			t.Fatal(err)
		}
	})
	phase("Redis stopped", func() {
		if err := rsrv.Pause(); err != nil {
			t.Fatal(err)
		}
	}, func() {
		if err := rsrv.Resume(); err != nil {
			t.Fatal(err)
		}
	})
	if n, err := a.ToolText(ctx, shared, "counter_increment", map[string]any{}); err != nil || n != "4" {
		t.Fatalf("counter at the end: %q %v, want 4 (one increment before, one after each outage)", n, err)
	}
}

// resumeAnswer sends a GET resuming after last on c and returns its
// status and body (the body of a refusal; an opened stream is closed).
func resumeAnswer(ctx context.Context, c *wire.Client, sid, last string) (int, string) {
	st, err := c.OpenGET(ctx, sid, last)
	if err == nil {
		st.Close()
		return http.StatusOK, ""
	}
	var se *wire.StatusError
	if errors.As(err, &se) {
		return se.Status, se.Body
	}
	return -1, err.Error()
}

// TestTornStreamNotResumed: a call started while the store is out of reach
// is served live, but its stream, whose events the store never got, is not
// resumed with a gap on any replica once the store is back: 400 with
// reason events_not_stored.
func TestTornStreamNotResumed(t *testing.T) {
	rsrv := redistest.StartWith(t, redistest.Options{Persist: true})
	rs := replicasOn(t, rsrv, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	if _, err := b.ToolText(ctx, sid, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	rsrv.Kill()
	if evs := readAll(t, startLong(t, ctx, a, sid, 2, 50)); len(evs) == 0 || !strings.Contains(evs[len(evs)-1].Data, "completed 2 steps") {
		t.Fatalf("a call in the outage, served live: %+v", evs)
	}
	post := startLong(t, ctx, a, sid, 100, 100)
	first := next(t, post, 1)[0]
	if err := rsrv.Restart(); err != nil {
		t.Fatal(err)
	}
	post.Close()
	for _, r := range []struct {
		name string
		c    *wire.Client
	}{{"A", a}, {"B", b}} {
		var status int
		var body string
		eventually(t, "the torn stream refused on "+r.name, func() bool {
			status, body = resumeAnswer(ctx, r.c, sid, first.ID)
			return status == http.StatusBadRequest && strings.Contains(body, `"reason":"events_not_stored"`)
		})
		t.Logf("resume on %s: %d %s", r.name, status, body)
	}
}
