// Package redistest starts a throwaway redis-server for tests: on a free
// loopback port, in a temporary directory, without persistence unless
// asked; a test can kill, stop and restart it to take the store away.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary is where the Debian package installs redis-server.
const Binary = "/usr/bin/redis-server"

// startTimeout bounds waiting for the server to accept connections.
const startTimeout = 10 * time.Second

// Path returns the redis-server binary to use, "" if there is none.
func Path() string {
	if _, err := os.Stat(Binary); err == nil {
		return Binary
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	return ""
}

// Server is a running redis-server.
type Server struct {
	Addr string // host:port
	bin  string
	args []string
	cmd  *exec.Cmd
	done chan struct{}
}

// URL is the server's redis:// URL for database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Options configure a server.
type Options struct {
	// Persist writes every change to an append-only file before answering
	// it (appendfsync always), so a server killed and restarted in the same
	// directory comes back with everything it had answered.
	Persist bool
}

// Start starts a redis-server, stopped when the test ends. It skips the test
// when redis-server is not installed.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Path()
	if bin == "" {
		t.Skipf("redis-server not installed (looked for %s and on PATH); install the redis-server package", Binary)
	}
	s, err := RunWith(bin, t.TempDir(), o)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Run starts bin on a free loopback port with its files in dir.
func Run(bin, dir string) (*Server, error) { return RunWith(bin, dir, Options{}) }

// RunWith is Run with options.
//
// The free port is found by listening on port 0 and closing the listener,
// so another process may take it before redis-server binds it: on "Address
// already in use" another port is tried, a few times.
func RunWith(bin, dir string, o Options) (*Server, error) {
	var err error
	for range portAttempts {
		var s *Server
		if s, err = runOnce(bin, dir, o); err == nil || !strings.Contains(err.Error(), "Address already in use") {
			return s, err
		}
	}
	return nil, err
}

// portAttempts bounds RunWith's tries of a free port.
const portAttempts = 5

func runOnce(bin, dir string, o Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--protected-mode", "no"}
	if o.Persist {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), bin: bin, args: args}
	return s, s.start()
}

// start runs the server's command and waits until it accepts connections.
func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.done = cmd, make(chan struct{})
	done := s.done
	ready := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if log.Len() < 4096 {
				log.WriteString(sc.Text() + "\n")
			}
			if !signalled && strings.Contains(sc.Text(), "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
		cmd.Wait()
		close(done)
	}()
	select {
	case <-ready:
		return nil
	case <-done:
		return fmt.Errorf("redis-server exited: %s", log.String())
	case <-time.After(startTimeout):
		s.Stop()
		return fmt.Errorf("redis-server not ready after %v", startTimeout)
	}
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	<-s.done
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it
// to exit; Restart brings it back.
func (s *Server) Kill() { s.Stop() }

// Restart starts the server again on the same port and directory, after
// Kill (a persistent server comes back with what it had).
func (s *Server) Restart() error {
	select {
	case <-s.done:
	default:
		return fmt.Errorf("redis-server at %s is still running", s.Addr)
	}
	return s.start()
}

// Pause stops the server with SIGSTOP: its connections stay open and
// nothing answers, as with a server that hangs. Resume continues it.
func (s *Server) Pause() error {
	return s.cmd.Process.Signal(syscall.SIGSTOP)
}

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error {
	return s.cmd.Process.Signal(syscall.SIGCONT)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
