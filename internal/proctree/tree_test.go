//go:build !windows

package proctree

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Scripts that leave a sleep behind: one in the process group that ignores
// SIGTERM, one that left the group with setsid. Each prints the sleep's pid.
var leavers = map[string]string{
	"ignores SIGTERM": `(trap '' TERM; exec sleep 300) >/dev/null 2>&1 & echo $!`,
	"setsid":          `setsid sleep 300 >/dev/null 2>&1 & echo $!`,
}

// TestKillLeavesNothing: whether the command is still running or has
// exited (orphaning the sleep), Kill leaves no process of the tree.
func TestKillLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	for name, script := range leavers {
		for _, exits := range []bool{false, true} {
			tail := "; exec sleep 300"
			if exits {
				tail = "; exit 0"
			}
			cmd := exec.Command("/bin/sh", "-c", script+tail)
			tree := Prepare(cmd)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("%s: reading the sleep's pid: %v", name, err)
			}
			sleep, _ := strconv.Atoi(strings.TrimSpace(line))
			waited := make(chan struct{})
			go func() { _ = tree.Wait(); close(waited) }()
			if exits {
				<-waited
				// Orphaned, the sleep is the harness's child, not init's.
				if p, ok := stat(sleep); !ok || p.ppid != os.Getpid() {
					t.Errorf("%s: the orphaned sleep's parent is %d, want the harness (%d), a subreaper", name, p.ppid, os.Getpid())
				}
			}
			tree.Signal(syscall.SIGTERM)
			found := tree.Kill()
			<-waited
			if Alive(sleep) {
				t.Errorf("%s (command exits %v): the sleep (pid %d) survived Kill", name, exits, sleep)
			}
			if !contains(found, sleep) {
				t.Errorf("%s (command exits %v): Kill found %v, not the sleep (pid %d)", name, exits, found, sleep)
			}
			if ms := tree.Members(); len(ms) != 0 {
				t.Errorf("%s (command exits %v): members left after Kill: %v", name, exits, ms)
			}
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestReapedPidIsNotSignalled: once Wait has reaped the command, its pid
// may be handed to an unrelated process; Signal and Kill must not reach
// it. The reuse is simulated: the reaped command's pid is set to that of
// a live process leading a group of its own, as a reused pid would be.
func TestReapedPidIsNotSignalled(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	tree := Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := tree.Wait(); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "300")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	cmd.Process.Pid = other.Process.Pid

	tree.Signal(syscall.SIGTERM)
	if found := tree.Kill(); len(found) != 0 {
		t.Errorf("Kill found %v in a tree whose command was reaped and left nothing", found)
	}
	if ms := tree.Members(); len(ms) != 0 {
		t.Errorf("Members of a reaped tree that left nothing: %v", ms)
	}
	if p, ok := stat(other.Process.Pid); !ok || p.zombie {
		t.Fatalf("the process that took the reaped pid (%d) was ended by the tree", other.Process.Pid)
	}
}
