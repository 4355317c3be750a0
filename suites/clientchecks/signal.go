package clientchecks

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// clientPIDs are the processes that are the client under test, the ones
// a user's Ctrl-C reaches first: what the run's /bin/sh -c started. A
// shell that exec'd the command (bash does, for a simple command) is the
// client itself; one that did not (dash forks it) is only the harness's
// wrapper, and the client is its children. Never the process group: a
// bridge's application, or a helper the client started, must not die
// with it and end the run for it.
func (cr *clientRun) clientPIDs() []int {
	pid := cr.cmd.Process.Pid
	argv, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || string(bytes.TrimRight(argv, "\x00")) != strings.Join(cr.cmd.Args, "\x00") {
		return []int{pid} // exec'd into the client (or no /proc to tell)
	}
	if kids := children(pid); len(kids) > 0 {
		return kids
	}
	return []int{pid}
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, ent := range entries {
		child, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// signalClient sends sig to the client process (clientPIDs) only.
func (cr *clientRun) signalClient(sig syscall.Signal) []int {
	pids := cr.clientPIDs()
	for _, p := range pids {
		// os.Process, not syscall.Kill, so the package builds on Windows
		// too (where only a kill can be sent).
		if pr, err := os.FindProcess(p); err == nil {
			_ = pr.Signal(sig)
			_ = pr.Release()
		}
	}
	return pids
}
