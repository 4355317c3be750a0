package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/proctree"
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
