package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/nettest"
	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/redisstore"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// replica is one reference server on the shared Redis store.
type replica struct {
	h    *server.Host
	logs *nettest.SyncBuffer
}

// replicas starts n reference servers sharing one Redis store.
func replicas(t *testing.T, n int, cfg server.Config) []*replica {
	t.Helper()
	return replicasOn(t, redistest.Start(t), n, cfg)
}

// replicasOn starts n reference servers sharing the Redis rs.
func replicasOn(t *testing.T, rs *redistest.Server, n int, cfg server.Config) []*replica {
	t.Helper()
	var out []*replica
	for range n {
		st, err := redisstore.New(context.Background(), redisstore.Options{URL: rs.URL(0), MaxAge: time.Minute, MaxBytes: 10 << 20})
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Store = st
		logs := &nettest.SyncBuffer{}
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h, err := server.NewHost(c, ln, server.HostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{h: h, logs: logs}
		t.Cleanup(func() {
			h.Close()
			st.Close()
			if t.Failed() {
				t.Logf("replica %s log:\n%s", h.URL(), logs.String())
			}
		})
		out = append(out, r)
	}
	return out
}

func replicaConfig() server.Config {
	cfg := server.ShortTimings()
	cfg.BearerTokens = nil
	cfg.SSEKeepAlive = -1
	return cfg
}

func (r *replica) client(t *testing.T) *wire.Client {
	c := wire.New(r.h.URL())
	c.HTTP = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.HTTP.CloseIdleConnections)
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestReplicasShareSession: a session initialized on A is served by B with
// its state, and a DELETE on B ends it on A too.
func TestReplicasShareSession(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	for i, c := range []*wire.Client{a, b, a, b} {
		got, err := c.ToolText(ctx, sid, "counter_increment", map[string]any{})
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if want := []string{"1", "2", "3", "4"}[i]; got != want {
			t.Fatalf("call %d on replica %d: counter %s, want %s", i+1, i%2, got, want)
		}
	}
	if resp, err := b.Delete(ctx, sid); err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE on B: %v %v", resp, err)
	}
	resp, err := a.Call(ctx, sid, "tools/list", nil)
	if err != nil || resp.Status != http.StatusNotFound {
		t.Fatalf("A after DELETE on B: %v %v, want 404", resp, err)
	}
}

// startLong starts long_operation on c and reads its priming event.
func startLong(t *testing.T, ctx context.Context, c *wire.Client, sid string, steps, intervalMS int) *wire.Stream {
	t.Helper()
	st, err := c.OpenPOST(ctx, sid, c.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": steps, "interval_ms": intervalMS}, "tok")))
	if err != nil {
		t.Fatal(err)
	}
	if prime, err := st.Next(); err != nil || !prime.HasID || prime.Data != "" {
		t.Fatalf("priming event: %+v %v", prime, err)
	}
	return st
}

// readAll reads st to its end, message events only.
func readAll(t *testing.T, st *wire.Stream) []sse.Event {
	t.Helper()
	return messages(t, st)
}

// TestReplicasResume: a POST stream cut on A is resumed on B with its
// Last-Event-ID: every missed notification, then the response, once each.
func TestReplicasResume(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	post := startLong(t, ctx, a, sid, 4, 300)
	seen := next(t, post, 2)
	post.Close() // cut on A
	resumed, err := b.OpenGET(ctx, sid, seen[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if resumed.Resp.StatusCode != http.StatusOK {
		t.Fatalf("resume on B: %d", resumed.Resp.StatusCode)
	}
	rest := readAll(t, resumed)
	if got := describe(t, append(seen, rest...)); got != allFourSteps {
		t.Fatalf("client saw %q, want %q", got, allFourSteps)
	}
}

// TestReplicasNotifyRouted: a standalone GET held on B receives the
// notifications of a call running on A once the call's stream is cut; the
// response stays on the call's stream, resumable anywhere.
func TestReplicasNotifyRouted(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	get, err := b.OpenGET(ctx, sid, "")
	if err != nil {
		t.Fatal(err)
	}
	defer get.Close()
	if prime, err := get.Next(); err != nil || prime.Data != "" {
		t.Fatalf("GET on B: first event %+v %v, want priming", prime, err)
	}
	post := startLong(t, ctx, a, sid, 3, 300)
	seen := next(t, post, 2)
	post.Close()
	onGET := next(t, get, 4)
	if got := describe(t, onGET); got != "progress II, log step 2 of 3, progress III, log step 3 of 3" {
		t.Fatalf("GET on B got %q", got)
	}
	resumed, err := b.OpenGET(ctx, sid, seen[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if got := describe(t, readAll(t, resumed)); got != "result completed 3 steps" {
		t.Fatalf("resumed stream: %q", got)
	}
}

// TestReplicasExpireOnce: every replica reaps, one expires the session.
func TestReplicasExpireOnce(t *testing.T) {
	rs := replicas(t, 3, replicaConfig())
	ctx := testCtx(t)
	a := rs[0].client(t)
	sid := connectOn(t, ctx, a)
	// Every replica holds a copy.
	for _, r := range rs[1:] {
		if _, err := r.client(t).ToolText(ctx, sid, "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	expired := func() int {
		n := 0
		for _, r := range rs {
			n += strings.Count(r.logs.String(), "msg=\"session expired\"")
		}
		return n
	}
	eventually(t, "the session to expire", func() bool { return expired() > 0 })
	for _, r := range rs {
		eventually(t, "every replica to drop it", func() bool { return r.h.Server().SessionCount() == 0 })
	}
	if n := expired(); n != 1 {
		t.Fatalf("expired %d times, want once", n)
	}
	resp, err := rs[2].client(t).Call(ctx, sid, "tools/list", nil)
	if err != nil || resp.Status != http.StatusNotFound {
		t.Fatalf("after expiry: %v %v, want 404", resp, err)
	}
}

// connectOn runs the handshake on c and returns the session id.
func connectOn(t *testing.T, ctx context.Context, c *wire.Client) string {
	t.Helper()
	sid, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sid
}

// TestReplicasShareJobs: a job started on A is read on B, and its resume
// token continues the conversation on B.
func TestReplicasShareJobs(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	job := func(c *wire.Client, name string, args map[string]any) jobSnapshot {
		t.Helper()
		text, err := c.ToolText(ctx, sid, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var snap jobSnapshot
		if err := json.Unmarshal([]byte(text), &snap); err != nil {
			t.Fatal(err)
		}
		return snap
	}
	started := job(a, "job_start", map[string]any{"steps": 2, "interval_ms": 50})
	var done jobSnapshot
	eventually(t, "the job to complete, seen on B", func() bool {
		done = job(b, "job_get", map[string]any{"job_id": started.JobID})
		return done.Status == "completed"
	})
	if done.ResumeToken == "" {
		t.Fatalf("completed job without a resume token: %+v", done)
	}
	next := job(b, "job_start", map[string]any{"steps": 1, "interval_ms": 0, "resume_token": done.ResumeToken})
	// Read on A: B's job is shared too.
	if got := job(a, "job_get", map[string]any{"job_id": next.JobID}); got.Turn != 2 || got.ConversationID != done.ConversationID {
		t.Fatalf("resume token of A's job on B: %+v, want turn 2 of %s", got, done.ConversationID)
	}
}

// TestReplicasLongCallNotLost: a call that runs on after its stream was cut,
// longer than a lease lasts unrenewed, is not taken for lost: its replica
// renews the lease, and the stream resumed elsewhere gets the response.
func TestReplicasLongCallNotLost(t *testing.T) {
	rs := replicas(t, 2, replicaConfig())
	ctx := testCtx(t)
	a, b := rs[0].client(t), rs[1].client(t)
	sid := connectOn(t, ctx, a)
	post := startLong(t, ctx, a, sid, 3, 1100) // 3.3 s, past the 2 s lease
	seen := next(t, post, 2)
	post.Close()
	resumed, err := b.OpenGET(ctx, sid, seen[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if got := describe(t, append(seen, readAll(t, resumed)...)); got != "progress I, log step 1 of 3, progress II, log step 2 of 3, progress III, log step 3 of 3, result completed 3 steps" {
		t.Fatalf("client saw %q", got)
	}
}
