package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
)

// TestE2EServerCatchesReplicaFixtures: the replica checks and the checks
// with a replica leg (replicaLegs, at both revisions), run with --url and
// --replica-url against two replicas of each replica fixture (on a Redis
// of its own), pass against the reference replicas and fail against
// exactly the fixtures that break them.
func TestE2EServerCatchesReplicaFixtures(t *testing.T) {
	skipShort(t, "runs the replica checks against every replica fixture")
	t.Parallel()
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exe := buildCLI(t)
	for _, f := range servers.ReplicaFixtures() {
		// Side by side, each on a Redis of its own, as many at once as the
		// test binary's -parallel (the cores) allows with the package's
		// other tests.
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			// Replica B in-process; replica A a process of its own, which
			// REPLICA-LOSS kills.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			b, err := f.Start(servers.Config(), rs.URL(0), ln)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
			js := filepath.Join(t.TempDir(), "r.json")
			out, errOut, code := runSelf(t, suiteTimeout, "server",
				"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} --store %s %s", exe, rs.URL(0), f.Name),
				"--url", "http://127.0.0.1:{port}/mcp", "--replica-url", b.URL(),
				"--target-profile", profile, "--focus", "^REPLICA-|^("+strings.Join(replicaLegs, "|")+")$",
				"--protocol-version", "all", "--json", js, "--strict", "--suggest-profile", "")
			want := exitOK
			if len(f.Breaks) > 0 {
				want = exitFail
			}
			var wrong []string
			if code != want {
				wrong = append(wrong, "exit code differs")
			}
			ran := 0
			for _, c := range readRun(t, js).Checks {
				if !strings.HasPrefix(c.ID, "REPLICA-") && !slices.Contains(replicaLegs, c.ID) {
					continue
				}
				ran++
				broken := slices.Contains(f.Breaks, c.ID)
				switch {
				case broken && c.Verdict == report.Pass:
					wrong = append(wrong, c.Name()+" passed: the check does not catch it")
				case !broken && c.Verdict != report.Pass:
					wrong = append(wrong, c.Name()+" is "+string(c.Verdict)+", but the fixture does not break it: "+c.Message)
				}
			}
			n := 2 * len(replicaLegs) // at both revisions
			for _, e := range suites.Of(catalogue.Server) {
				if e.Section == "replicas" {
					n++
				}
			}
			if ran != n {
				wrong = append(wrong, fmt.Sprintf("%d checks ran, want every replica check and each replica leg at both revisions (%d)", ran, n))
			}
			if len(wrong) > 0 {
				t.Errorf("replica fixture %s (%s), exit %d:\n  %s\nconsole:\n%s\nstderr:\n%s", f.Name, f.About, code, strings.Join(wrong, "\n  "), out, errOut)
			}
		})
	}
}

// replicaLegs are the checks outside the replicas section that also ask
// the other replica when the run has one.
var replicaLegs = []string{"TASK-DURABLE-CREATE"}

// skipsForReplicas reports a replica check skipped for want of
// --replica-url: what it does against one replica (TestE2EServerReference,
// the single-server fixtures); TestE2EServerCatchesReplicaFixtures runs them.
func skipsForReplicas(c report.Check) bool {
	return strings.HasPrefix(c.ID, "REPLICA-") && c.Verdict == report.Skip && c.Cause == report.NeedsReplica
}

// startReplica runs `mcp-conform serve --store` as its own process and
// returns its URL; the process is killed at the end of the test.
func startReplica(t *testing.T, exe, store string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(exe, "serve", "--addr", "127.0.0.1:0", "--store", store,
		"--reaper-interval", "200ms", "--idle-threshold", "10s", "--grace-period", "10s", "--log-level", "warn")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("replica log:\n%s", logs.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		url, ok := strings.CutPrefix(l, "listening on ")
		if !ok {
			t.Fatalf("replica said %q", l)
		}
		return url, cmd
	case <-time.After(20 * time.Second):
		t.Fatal("replica did not start")
	}
	return "", nil
}

// servedReplicas starts two `serve --store` processes on one Redis and
// returns clients of both and replica A's process, for a test to kill.
func servedReplicas(t *testing.T) (ctx context.Context, a, b *wire.Client, cmdA *exec.Cmd) {
	t.Helper()
	skipShort(t, "builds the binary and runs two replicas")
	t.Parallel()
	exe := buildCLI(t)
	rs := redistest.Start(t)
	urlA, cmdA := startReplica(t, exe, rs.URL(0))
	urlB, _ := startReplica(t, exe, rs.URL(0))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, wire.New(urlA), wire.New(urlB), cmdA
}

// TestReplicaKilled: replica A is killed (SIGKILL) in the middle of a call;
// the session goes on on replica B with its state, and the call's stream,
// resumed on B, replays what A stored, then reports the call lost with the
// envelope's resume hint, once.
func TestReplicaKilled(t *testing.T) {
	ctx, a, b, cmdA := servedReplicas(t)
	sid, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := a.ToolText(ctx, sid, "counter_increment", map[string]any{}); err != nil || n != "1" {
		t.Fatalf("counter on A: %q %v", n, err)
	}
	post, err := a.OpenPOST(ctx, sid, a.Request("tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 100, "interval_ms": 100}, "tok")))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for range 3 { // priming event, progress 1, log 1
		ev, err := post.Next()
		if err != nil {
			t.Fatal(err)
		}
		last = ev.ID
	}
	cmdA.Process.Kill()
	post.Close()
	if n, err := b.ToolText(ctx, sid, "counter_increment", map[string]any{}); err != nil || n != "2" {
		t.Fatalf("counter on B after A was killed: %q %v", n, err)
	}
	resumed, err := b.OpenGET(ctx, sid, last)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	ids := map[string]bool{}
	for {
		ev, err := resumed.Next()
		if err != nil {
			t.Fatalf("resumed stream on B ended without an answer: %v", err)
		}
		if ev.Data == "" {
			continue
		}
		if ids[ev.ID] {
			t.Fatalf("event %s twice", ev.ID)
		}
		ids[ev.ID] = true
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
				Data struct {
					Reason string `json:"reason"`
					Resume struct{ Method, Via string }
				} `json:"data"`
			} `json:"error"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			t.Fatal(err)
		}
		if m.Result != nil {
			t.Fatalf("a result from the killed replica: %s", ev.Data)
		}
		if m.Error != nil {
			if m.Error.Data.Reason != "replica_lost" || m.Error.Data.Resume.Method != "job_start" || m.Error.Data.Resume.Via != "resume_token" {
				t.Fatalf("lost call answered %s", ev.Data)
			}
			return
		}
	}
}
