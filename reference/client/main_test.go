package client_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if a client goroutine outlives its tests: Close
// must stop every stream runner and reconnect.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if left := clientGoroutines(5 * time.Second); left != "" {
			fmt.Fprintf(os.Stderr, "client goroutines still running after the tests:\n%s\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

// clientGoroutines waits up to d for the client's goroutines to end and
// returns the stacks of those left.
func clientGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "reference/client.(*Client)") {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
