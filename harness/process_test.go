package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/proctree"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// leaverScript writes a script that leaves two sleeps behind, their pids in
// pidFile: one in the process group that ignores SIGTERM, one that left
// the group with setsid. With exit, the script exits at once, orphaning
// them; otherwise it waits.
func leaverScript(t *testing.T, exit bool) (script, pidFile string) {
	dir := t.TempDir()
	pidFile = filepath.Join(dir, "pids")
	end := "wait"
	if exit {
		end = "exit 0"
	}
	script = filepath.Join(dir, "leaver.sh")
	body := "#!/bin/sh\n" +
		"(trap '' TERM; exec sleep 300) >/dev/null 2>&1 &\necho $! >> " + pidFile + "\n" +
		"setsid sleep 300 >/dev/null 2>&1 &\necho $! >> " + pidFile + ".tmp\n" +
		"cat " + pidFile + ".tmp >> " + pidFile + "\n" + end + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, pidFile
}

// awaitPids reads the two pids the script writes, by a deadline.
func awaitPids(t *testing.T, pidFile string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(pidFile)
		if f := strings.Fields(string(b)); len(f) == 2 {
			var pids []int
			for _, s := range f {
				n, _ := strconv.Atoi(s)
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script wrote no pids in 10s (%q)", b)
		}
		<-tick.C
	}
}

// TestServerCmdLeavesNothing: stopping a --server-cmd target ends every
// process it started, the one that ignores SIGTERM in its process group
// and the one that left it with setsid, whether the command still runs or
// exited before.
func TestServerCmdLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	up := httptest.NewServer(http.NotFoundHandler()) // the URL answers at once
	defer up.Close()
	for _, exit := range []bool{false, true} {
		script, pidFile := leaverScript(t, exit)
		p, err := startProcess(context.Background(), script, up.URL, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pids := awaitPids(t, pidFile)
		p.Close()
		for _, pid := range pids {
			if proctree.Alive(pid) {
				t.Errorf("script exits %v: pid %d still running after Close", exit, pid)
			}
		}
	}
}

// stubProcessEnv, when set (an address), makes TestStubServerProcess a
// server process on that address: the stub MCP server for its first
// stubAnswered requests (the run's probes), then no answer to any, and
// exit status 3, as a crash would, stubHangs after the first unanswered.
const (
	stubProcessEnv = "HARNESS_STUB_ADDR"
	stubAnswered   = 2
	stubHangs      = time.Second
)

// TestStubServerProcess is not a test: it is the process that
// TestServerCmdDeathEndsTheRun starts as its --server-cmd.
func TestStubServerProcess(t *testing.T) {
	addr := os.Getenv(stubProcessEnv)
	if addr == "" {
		t.Skip("the --server-cmd of TestServerCmdDeathEndsTheRun")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(4)
	}
	stub := &stubMCP{version: "2025-11-25"}
	var n atomic.Int32
	hung := make(chan struct{})
	var once sync.Once
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= stubAnswered {
			stub.ServeHTTP(w, r)
			return
		}
		once.Do(func() { close(hung) })
		<-r.Context().Done()
	}))
	<-hung
	time.Sleep(stubHangs) // the crash comes this long after the hang began
	os.Exit(3)
}

// TestServerCmdDeathEndsTheRun: when the process --server-cmd started
// ends on its own during the run, the run ends soon after with a setup
// error naming that and its exit status, and the checks still waiting or
// not yet begun are inconclusive or not run, saying why, none failed.
func TestServerCmdDeathEndsTheRun(t *testing.T) {
	cmd := fmt.Sprintf("%s=127.0.0.1:{port} %q -test.run='^TestStubServerProcess$'", stubProcessEnv, os.Args[0])
	began := time.Now()
	run, err := Run(context.Background(), Options{ServerCmd: cmd, URL: "http://127.0.0.1:{port}/mcp", SuggestProfile: ""}, io.Discard, io.Discard)
	took := time.Since(began)
	t.Logf("the run took %v", took.Round(100*time.Millisecond))
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "ended on its own (exit status 3)") {
		if run != nil {
			for _, c := range run.Checks {
				t.Logf("%s %s %.2fs %s", c.Name(), c.Verdict, c.Seconds, firstLine(c.Message))
			}
		}
		t.Fatalf("Run = %v; want a setup error saying the --server-cmd ended on its own (exit status 3)", err)
	}
	if run == nil {
		t.Fatal("no run: the verdicts should stand in the reports")
	}
	// Whether the end came while checks were waiting (inconclusive) or
	// before they began (skipped, not run) depends on the machine's speed;
	// either way the end is named, and no check fails for it.
	named := 0
	for _, c := range run.Checks {
		if !strings.Contains(c.Message, "ended on its own") {
			continue
		}
		switch c.Verdict {
		case report.Inconclusive, report.Skip:
			named++
		default:
			t.Errorf("%s is %s for the process's end: %s", c.ID, c.Verdict, firstLine(c.Message))
		}
	}
	if named == 0 {
		for _, c := range run.Checks {
			t.Logf("%s %s %s", c.ID, c.Verdict, firstLine(c.Message))
		}
		t.Error("no check was inconclusive or not run for the process that ended")
	}
}

// TestServerCmdAnsweredByAnother: a command that cannot serve on its
// port, because another server holds it, is not taken for the server that
// answers there, whether it gives up before the URL answered or after:
// either the start fails or Died says the command ended.
func TestServerCmdAnsweredByAnother(t *testing.T) {
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	for _, cmd := range []string{"exit 1 # {port}", "sleep 0.3; exit 1 # {port}"} {
		p, err := startProcess(context.Background(), cmd, other.URL, 10*time.Second)
		if err != nil {
			if !strings.Contains(err.Error(), "something else answered") && !strings.Contains(err.Error(), "exited before") {
				t.Errorf("%s: startProcess = %v; want an error saying something else answered", cmd, err)
			}
			continue
		}
		select {
		case err := <-p.Died():
			if !strings.Contains(err.Error(), "ended on its own (exit status 1)") {
				t.Errorf("%s: Died = %v; want it to say the command ended on its own (exit status 1)", cmd, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: neither the start failed nor Died reported the exit within 10s", cmd)
		}
		p.Close()
	}
}

// TestFreePortBelowEphemeral: where the kernel says which ports it hands
// out by itself, the target's port is below them, free to listen on.
func TestFreePortBelowEphemeral(t *testing.T) {
	lo, hi, ok := belowEphemeral()
	if !ok {
		t.Skip("no ephemeral port range to stay below")
	}
	for range 20 {
		s, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(s)
		if port < lo || port > hi {
			t.Fatalf("freePort = %d; want it in [%d, %d], below the ephemeral range", port, lo, hi)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+s)
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		ln.Close()
	}
}
