// Package redistest starts a throwaway redis-server for tests: on a free
// loopback port, in a temporary directory, without persistence.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
	cmd  *exec.Cmd
	done chan struct{}
}

// URL is the server's redis:// URL for database db.
func (s *Server) URL(db int) string { return fmt.Sprintf("redis://%s/%d", s.Addr, db) }

// Start starts a redis-server, stopped when the test ends. It skips the test
// when redis-server is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Path()
	if bin == "" {
		t.Skipf("redis-server not installed (looked for %s and on PATH); install the redis-server package", Binary)
	}
	s, err := Run(bin, t.TempDir())
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Run starts bin on a free loopback port with its files in dir.
func Run(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
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
		close(s.done)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("redis-server exited: %s", log.String())
	case <-time.After(startTimeout):
		s.Stop()
		return nil, fmt.Errorf("redis-server not ready after %v", startTimeout)
	}
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
	<-s.done
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
