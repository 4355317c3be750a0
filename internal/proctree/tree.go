//go:build !windows

// Package proctree ends what the harness starts: a command, its process
// group, and the descendants that left the group (setsid) or outlived
// their parent, so that no process of a target or of a client under test
// outlives the check or the run that started it.
//
// A tree's command runs in a process group of its own with a marker in its
// environment, which its descendants inherit. On Linux the harness is made
// a child subreaper, so a descendant orphaned by its parent's exit is
// reparented to the harness instead of to init, where it can be found by
// its parent id, killed and reaped.
package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// markerVar is the environment variable that marks a tree's processes.
const markerVar = "MCP_CONFORM_TREE"

// reapWait bounds how long Kill waits for the processes it killed to be
// gone (reparented and reaped).
const reapWait = 2 * time.Second

// quietRound is the pause between Kill's rounds; maxRounds bounds them.
const (
	quietRound = 10 * time.Millisecond
	maxRounds  = 10
)

var seq atomic.Int64

// Tree is a command's process tree.
//
// Once the command is reaped its pid, which is also its process group's
// id, can be handed to an unrelated process (pid_max is 32768 on many
// machines, and a test run starts thousands of processes), so a signal
// to it could end someone else's server. Wait therefore reaps the command
// only when no Signal or Kill is under way, and those that follow find the
// tree by its marker alone.
type Tree struct {
	cmd    *exec.Cmd
	marker string // markerVar=value, as in the environment

	mu       sync.Mutex // held while the pid is signalled, and to release it
	released bool       // the command was reaped: its pid is no longer the tree's
}

// Prepare readies cmd, not yet started, to run as a tree: in a process
// group of its own, with the tree's marker in its environment.
func Prepare(cmd *exec.Cmd) *Tree {
	becomeSubreaper()
	t := &Tree{cmd: cmd, marker: fmt.Sprintf("%s=%d.%d", markerVar, os.Getpid(), seq.Add(1))}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(slices.Clone(cmd.Env), t.marker)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return t
}

// Signal sends sig to the command's process group, unless the command
// has been reaped.
func (t *Tree) Signal(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.cmd.Process; p != nil && !t.released {
		_ = syscall.Kill(-p.Pid, sig)
	}
}

// Wait waits for the command to exit and reaps it, as the exec.Cmd's Wait
// does (which it calls): the one way a tree's command may be reaped.
func (t *Tree) Wait() error {
	if t.cmd.Process != nil && awaitExit(t.cmd.Process.Pid) {
		t.mu.Lock()
		t.released = true
		t.mu.Unlock()
	}
	return t.cmd.Wait()
}

// Kill sends SIGKILL to the process group and to every other process of
// the tree, and waits (briefly) until they are gone, reaping those the
// harness adopted. It returns the ids of the processes it found besides
// the command itself: what the command left running. The command is
// reaped by Wait.
func (t *Tree) Kill() []int {
	if t.cmd.Process == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	leader := t.cmd.Process.Pid
	if t.released {
		leader = 0 // not ours any more: the tree is what carries its marker
	}
	var found []int
	// A process caught forking, or in the middle of an exec (when its
	// environment cannot be read), is found by a later round: Kill ends
	// after two rounds in a row find nothing.
	tick := time.NewTicker(quietRound)
	defer tick.Stop()
	for quiet, round := 0, 0; quiet < 2 && round < maxRounds; round++ {
		if leader > 0 {
			_ = syscall.Kill(-leader, syscall.SIGKILL)
		}
		ms := t.members(leader)
		if len(ms) == 0 {
			quiet++
			<-tick.C
			continue
		}
		quiet = 0
		for _, pid := range ms {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if !slices.Contains(found, pid) {
				found = append(found, pid)
			}
		}
		reap(ms, time.Now().Add(reapWait))
	}
	return found
}

// Members returns the ids of the tree's live processes other than the
// command itself: those in its process group, its descendants, and those
// that carry its marker.
func (t *Tree) Members() []int {
	if t.cmd.Process == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return t.members(0)
	}
	return t.members(t.cmd.Process.Pid)
}

// members lists the tree's processes; leader is the command's pid, or 0
// once it was reaped, when only the marker and descent from a marked
// process say who belongs.
func (t *Tree) members(leader int) []int {
	procs := scan()
	in := map[int]bool{}
	for _, p := range procs {
		if p.pid != leader && ((leader > 0 && p.pgid == leader) || hasEnv(p.pid, t.marker)) {
			in[p.pid] = true
		}
	}
	// Descendants of the command and of every member, by parent id; a
	// subreaper keeps an orphan's parent id pointing at the harness, so
	// what the tree orphaned is found by the marker above.
	for grew := true; grew; {
		grew = false
		for _, p := range procs {
			if !in[p.pid] && p.pid != leader && ((leader > 0 && p.ppid == leader) || in[p.ppid]) {
				in[p.pid], grew = true, true
			}
		}
	}
	self := os.Getpid()
	var out []int
	for _, p := range procs {
		if in[p.pid] && p.pid != self && !(p.zombie && p.ppid != self) {
			out = append(out, p.pid)
		}
	}
	slices.Sort(out)
	return out
}

// reap waits until each of pids is gone, reaping those that are (or
// become, as their parents die) the harness's children, until deadline.
func reap(pids []int, deadline time.Time) {
	self := os.Getpid()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for len(pids) > 0 && time.Now().Before(deadline) {
		var left []int
		for _, pid := range pids {
			p, ok := stat(pid)
			switch {
			case !ok:
				continue // gone
			case p.ppid == self:
				var ws syscall.WaitStatus
				if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
					continue
				}
			case p.zombie:
				continue // another parent's to reap
			}
			left = append(left, pid)
		}
		pids = left
		if len(pids) > 0 {
			<-tick.C
		}
	}
}
