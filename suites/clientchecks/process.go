package clientchecks

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/proctree"
)

// process is a run of a client command: /bin/sh -c 'CMD URL' in its own
// process group, with the run's contract in the environment.
type process struct {
	cmd  *exec.Cmd
	tree *proctree.Tree
}

func startProcess(cr *clientRun, r contract.Run) (*process, error) {
	command := cr.e.client.Command
	cmd := exec.Command("/bin/sh", "-c", command+" "+shellQuote(r.URL))
	cmd.Env = append(cleanEnv(), append(r.Env(), fmt.Sprintf("%s=%d", contract.EnvRun, cr.n))...)
	p := &process{cmd: cmd, tree: proctree.Prepare(cmd)}
	cmd.Stdout, cmd.Stderr = cr.out, cr.errw
	cmd.WaitDelay = 2 * time.Second // a child that keeps stdout open
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the client %q: %v", command, err)
	}
	go func() {
		err := p.tree.Wait()
		code, signal := 0, ""
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				signal = ws.Signal().String()
			}
		default:
			code, signal = -1, err.Error()
		}
		cr.exit(code, signal, "")
	}()
	return p, nil
}

func (p *process) kill() { p.tree.Kill() }

func (p *process) killing() string { return "killed (SIGKILL)" }

func (p *process) reap() string {
	if left := p.tree.Kill(); len(left) > 0 {
		return fmt.Sprintf("%d processes running after it exited (pids %v): killed", len(left), left)
	}
	return ""
}

func (p *process) interrupt() string {
	return fmt.Sprintf("SIGINT to the client process (pid %v)", p.signalClient(syscall.SIGINT))
}

// clientPIDs are the processes that are the client under test, the ones
// a user's Ctrl-C reaches first: what the run's /bin/sh -c started. A
// shell that exec'd the command (bash does, for a simple command) is the
// client itself; one that did not (dash forks it) is only the harness's
// wrapper, and the client is its children. Never the process group: a
// bridge's application, or a helper the client started, must not die
// with it and end the run for it.
func (p *process) clientPIDs() []int {
	pid := p.cmd.Process.Pid
	argv, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || string(bytes.TrimRight(argv, "\x00")) != strings.Join(p.cmd.Args, "\x00") {
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
func (p *process) signalClient(sig syscall.Signal) []int {
	pids := p.clientPIDs()
	for _, pid := range pids {
		// os.Process, not syscall.Kill, so the package builds on Windows
		// too (where only a kill can be sent).
		if pr, err := os.FindProcess(pid); err == nil {
			_ = pr.Signal(sig)
			_ = pr.Release()
		}
	}
	return pids
}

// cleanEnv is the harness's environment without any contract variable.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range contract.Vars {
			drop = drop || k == v
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
