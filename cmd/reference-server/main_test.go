package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestRun serves on a free port until its context ends; bad flags exit 2
// and -h 0, as mcp-conform reference-server does.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading stdout: %v (stderr %s)", err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("stdout line %q", line)
	}
	go io.Copy(io.Discard, pr)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if _, err := wire.New(url).Connect(rctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Fatalf("exit %d after its context ended, stderr %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not return after its context ended")
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--grace-period", "0"}, cli.ExitUsage, "reference-server: --grace-period must be positive"},
		{[]string{"extra"}, cli.ExitUsage, "unexpected arguments: extra"},
		{[]string{"-h"}, cli.ExitOK, "usage: reference-server [flags]"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), tc.args, io.Discard, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
