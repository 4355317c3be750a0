// Package proctree ends what the harness starts: a command and its
// descendants. On Windows, which has neither process groups that signals
// reach nor /proc, a tree is what taskkill /T finds from the command.
package proctree

import (
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"
)

// Tree is a command's process tree.
type Tree struct{ cmd *exec.Cmd }

// Prepare readies cmd, not yet started, to run as a tree: in a process
// group of its own, so a console interrupt meant for the harness does not
// reach it.
func Prepare(cmd *exec.Cmd) *Tree {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
	return &Tree{cmd: cmd}
}

// Signal ends the tree: Windows cannot ask a process to stop with a
// signal, so any signal is a kill here.
func (t *Tree) Signal(syscall.Signal) { t.Kill() }

// Kill ends the command and every process it started (taskkill /T /F).
// Windows does not say which processes those were, so it returns none.
func (t *Tree) Kill() []int {
	if t.cmd.Process == nil {
		return nil
	}
	if err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(t.cmd.Process.Pid)).Run(); err != nil {
		_ = t.cmd.Process.Kill()
	}
	return nil
}

// Wait waits for the command to exit and reaps it.
func (t *Tree) Wait() error { return t.cmd.Wait() }

// Members returns no processes: Windows lists a process's children only
// by a snapshot of every process, which the harness does not take.
func (t *Tree) Members() []int { return nil }

// Alive reports whether pid is a running process.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
