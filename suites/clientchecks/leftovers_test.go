package clientchecks

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/proctree"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// runOnce is a check that starts the client once and waits for the run to
// end, whatever it printed.
func runOnce(cl *Client) kit.Check {
	return kit.Check{Entry: persistEntry(), Need: time.Second, Run: func(t *kit.T) {
		e := cl.newEnv(t, def{Entry: persistEntry()})
		cr := e.start(actionRun(contract.ActionList))
		select {
		case <-cr.done:
		case <-t.Context().Done():
			t.Fail("the run did not end")
		}
	}}
}

// TestRunsLeaveNothing: a client run that exits leaving a sleep in its
// process group that ignores SIGTERM, and one that left the group with
// setsid, leaves neither running once its check ended, and the log says
// so.
func TestRunsLeaveNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "client.sh")
	body := "#!/bin/sh\n" +
		"(trap '' TERM; exec sleep 300) >/dev/null 2>&1 &\necho $! >> " + pidFile + "\n" +
		"setsid sleep 300 >/dev/null 2>&1 &\necho $! >> " + pidFile + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := kit.Execute(context.Background(), runOnce(&Client{Command: script, StateRoot: dir}), 30*time.Second)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the client wrote no pids: %v (%s)", err, r.Message)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 2 {
		t.Fatalf("the client wrote pids %q, want 2", pids)
	}
	for _, s := range pids {
		pid, _ := strconv.Atoi(s)
		if proctree.Alive(pid) {
			t.Errorf("pid %d is still running after the check ended", pid)
		}
	}
	if !strings.Contains(r.Exchange, "left 2 processes running") {
		t.Errorf("the log does not say what the run left running:\n%s", r.Exchange)
	}
}
