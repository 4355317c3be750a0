package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/proctree"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// stopTimeout is how long a target process gets to exit after SIGTERM
// before it is killed.
const stopTimeout = 5 * time.Second

// processTarget is a target the harness starts itself from --server-cmd,
// on a free port substituted for {port}, and can restart (F-RESTART).
type processTarget struct {
	command string // with the port substituted
	url     string
	timeout time.Duration
	out     *tail
	cmd     *exec.Cmd
	tree    *proctree.Tree
	exited  chan struct{}
	waitErr *error // the command's Wait error, once exited is closed

	mu       sync.Mutex
	gen      int  // counts starts: an exit is reported only for the latest
	ready    bool // the latest start answered
	stopping bool // the harness is stopping the process (Close, Kill)
	began    time.Time
	died     chan error // the process exited on its own, once ready
	// startTook is how long the first start took to answer.
	startTook time.Duration
}

// startProcess picks a free port, substitutes it for {port} in the command
// and the URL, starts the command and waits until the URL answers HTTP.
func startProcess(ctx context.Context, command, url string, timeout time.Duration) (*processTarget, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &processTarget{
		command: strings.ReplaceAll(command, "{port}", port),
		url:     strings.ReplaceAll(url, "{port}", port),
		timeout: timeout,
		out:     &tail{max: 8 << 10},
		died:    make(chan error, 1),
	}
	began := time.Now()
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	p.startTook = time.Since(began)
	return p, nil
}

// StartTook is how long the command took to answer when the run began:
// what a restart of it needs, measured.
func (p *processTarget) StartTook() time.Duration { return p.startTook }

// freePort picks a port for the target: a free one below the range the
// kernel hands out for port 0 and outgoing connections, so that no other
// program's listener or connection takes it while the target is down
// (F-KILL, F-RESTART); the kernel's choice where there is no such range.
func freePort() (string, error) {
	if lo, hi, ok := belowEphemeral(); ok {
		for range 100 {
			port := lo + rand.IntN(hi-lo+1)
			if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
				ln.Close()
				return strconv.Itoa(port), nil
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// belowEphemeral is the range freePort picks from: from 10000 up to the
// kernel's ephemeral range (Linux: ip_local_port_range), when that leaves
// at least 4096 ports.
func belowEphemeral() (lo, hi int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	first, err := strconv.Atoi(f[0])
	if err != nil || first-1-10000 < 4096 {
		return 0, 0, false
	}
	return 10000, first - 1, true
}

func (p *processTarget) start(ctx context.Context) error {
	p.cmd = exec.Command("/bin/sh", "-c", p.command)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.tree = proctree.Prepare(p.cmd) // so stop reaches its children, wherever they went
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("--server-cmd: %w", err)
	}
	// Each start waits on its own command: a command whose wait was
	// given up on (see kill) must not touch its successor's.
	exited, waitErr := make(chan struct{}), new(error)
	p.mu.Lock()
	p.gen++
	gen := p.gen
	p.exited, p.waitErr, p.ready, p.stopping = exited, waitErr, false, false
	p.mu.Unlock()
	tree := p.tree
	go func() {
		*waitErr = tree.Wait()
		close(exited)
		p.watchTree(gen, tree, waitErr)
	}()
	if err := p.awaitReady(ctx); err != nil {
		p.Close()
		return err
	}
	p.mu.Lock()
	p.ready, p.began = true, time.Now()
	p.mu.Unlock()
	select {
	case <-exited:
		if !anyAlive(tree.Members()) {
			// What answered was not the command: another program holds
			// the port, or the command gave up on it (it could not bind it).
			p.Close()
			return fmt.Errorf("--server-cmd %q exited (%v), leaving no process running, just as %s answered: something else answered there; its output:\n%s", p.command, *waitErr, p.url, p.out)
		}
	default:
	}
	return nil
}

// treeGoneEvery is how often a command that exited but left processes
// running (a server it started in the background) is looked at again.
const treeGoneEvery = 250 * time.Millisecond

// watchTree reports on Died when start gen's tree, whose command has
// exited, has no process left although it had answered and the harness
// was not stopping it. A command that left its server running in the
// background is watched until that ends too.
func (p *processTarget) watchTree(gen int, tree *proctree.Tree, waitErr *error) {
	tick := time.NewTicker(treeGoneEvery)
	defer tick.Stop()
	for {
		p.mu.Lock()
		current, ready, stopping := gen == p.gen, p.ready, p.stopping
		p.mu.Unlock()
		if !current || stopping {
			return
		}
		if !anyAlive(tree.Members()) {
			if ready { // else start says why
				p.reportDeath(*waitErr)
			}
			return
		}
		<-tick.C
	}
}

// anyAlive reports whether one of pids is running: a zombie left for the
// harness to reap is not.
func anyAlive(pids []int) bool {
	return slices.ContainsFunc(pids, proctree.Alive)
}

func (p *processTarget) reportDeath(exit error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return
	}
	select {
	case p.died <- p.deathError(exit):
	default:
	}
}

// deathError says that the process ended on its own; p.mu is held.
func (p *processTarget) deathError(exit error) error {
	return fmt.Errorf("--server-cmd %q ended on its own (%v), %.1fs after it answered: the checks after that could not reach it; its output:\n%s",
		p.command, exit, time.Since(p.began).Seconds(), p.out)
}

// Gone looks at once whether the process has ended on its own, without
// waiting for the watcher to notice (see watchTree): a check that failed
// just as it ended must not stand as the target's failure. nil while it
// runs, before it answered, and while the harness stops or restarts it.
func (p *processTarget) Gone() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ready || p.stopping {
		return nil
	}
	select {
	case <-p.exited:
	default:
		return nil
	}
	if anyAlive(p.tree.Members()) {
		return nil
	}
	return p.deathError(*p.waitErr)
}

// Died delivers an error when the process exits without the harness
// stopping it (a crash, or a signal from elsewhere).
func (p *processTarget) Died() <-chan error { return p.died }

// halting marks the process as being stopped by the harness.
func (p *processTarget) halting() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
}

// awaitReady polls the URL until any HTTP answer arrives, the process
// exits, or the start timeout passes.
func (p *processTarget) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second, CheckRedirect: wire.RedirectPolicy(false)} // a redirect is an answer
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("--server-cmd %q exited before %s answered (%v); its output:\n%s", p.command, p.url, *p.waitErr, p.out)
		case <-ctx.Done():
			return fmt.Errorf("--server-cmd %q: %s did not answer within %v; its output:\n%s", p.command, p.url, p.timeout, p.out)
		case <-tick.C:
		}
	}
}

// Close stops the process tree: SIGTERM to the process group, then, once
// the command exited or after stopTimeout, SIGKILL to every process of the
// tree: the group, and the descendants that left it or were orphaned.
func (p *processTarget) Close() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	p.halting()
	p.tree.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
	}
	p.kill()
}

// Kill is F-KILL: SIGKILL to the process tree, nothing else; Restart
// starts it again.
func (p *processTarget) Kill(context.Context) error {
	if p.cmd == nil || p.cmd.Process == nil {
		return fmt.Errorf("--server-cmd: no process to kill")
	}
	p.halting()
	p.kill()
	return nil
}

// kill sends SIGKILL to the tree and waits for the command. A descendant
// the tree cannot find (one that left the group and cleared its
// environment) may hold the command's output open; the wait is bounded so
// that it cannot hold up the harness.
func (p *processTarget) kill() {
	p.tree.Kill()
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
	}
}

// Restart is F-RESTART: stop the process and start it again on the same port.
func (p *processTarget) Restart(ctx context.Context) error {
	p.Close()
	return p.start(ctx)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return "(none)"
	}
	return string(t.buf)
}

// Process is a server started from a command, as --server-cmd starts one.
type Process struct{ p *processTarget }

// StartProcess starts command on a free port substituted for {port} in it
// and in url, and waits until url answers HTTP (at most timeout).
func StartProcess(ctx context.Context, command, url string, timeout time.Duration) (*Process, error) {
	p, err := startProcess(ctx, command, url, timeout)
	if err != nil {
		return nil, err
	}
	return &Process{p}, nil
}

// URL is the server's URL, its port substituted.
func (p *Process) URL() string { return p.p.url }

// Pgid is the process group of the command and its children.
func (p *Process) Pgid() int { return p.p.cmd.Process.Pid }

// Close stops the process group.
func (p *Process) Close() { p.p.Close() }
