package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestUsageErrors: bad flags and commands exit 2 with a message, never a panic.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: mcp-conform"},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"serve", "--grace-period", "soon"}, "invalid value"},
		{[]string{"serve", "--grace-period", "-1s"}, "--grace-period must be positive"},
		{[]string{"serve", "--grace-period", "0"}, "--grace-period must be positive"},
		{[]string{"serve", "--sse-keepalive", "-1s"}, "--sse-keepalive must not be negative"},
		{[]string{"serve", "--expired-response", "teapot"}, `expired response must be "envelope" or "plain"`},
		{[]string{"serve", "--bearer-token", "alice"}, "want NAME=TOKEN"},
		{[]string{"serve", "--bearer-token", "a=t", "--bearer-token", "b=t"}, `already used by "a"`},
		{[]string{"serve", "--path", "mcp"}, "--path must start with /"},
		{[]string{"serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "extra"}, "unexpected arguments: extra"},
		{[]string{"serve", "--sse-retry", "0s"}, "--sse-retry must be positive"},
		{[]string{"serve", "--redirect-delay", "-1s"}, "--redirect-delay must not be negative"},
		{[]string{"serve", "--resume-get-wait", "-1ms"}, "--resume-get-wait must not be negative"},
		{[]string{"serve", "--max-sessions", "-1"}, "--max-sessions must be positive"},
		{[]string{"serve", "--max-jobs-per-client", "0"}, "--max-jobs-per-client must be positive"},
		{[]string{"serve", "--anonymous-session-rate", "NaN"}, "--anonymous-session-rate must be positive"},
		{[]string{"serve", "--write-timeout", "0s"}, "--write-timeout must be positive"},
		{[]string{"serve", "--allowed-origin", "notaurl"}, "-allowed-origin"},
		{[]string{"serve", "--allowed-origin", "https://app.example/path"}, "want an origin"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	for _, name := range []string{"reference-server", "serve"} { // serve: the earlier name
		var stderr bytes.Buffer
		if code := run(context.Background(), []string{name, "-h"}, io.Discard, &stderr); code != exitOK || !strings.Contains(stderr.String(), "-reaper-interval") {
			t.Errorf("%s -h: exit %d, %q", name, code, stderr.String())
		}
	}
}

// TestServeSignal builds the binary and stops it with SIGTERM: exit 0, and
// lifecycle lines on stderr.
func TestServeSignal(t *testing.T) {
	cmd := self(t, context.Background(), "serve", "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimPrefix(strings.TrimSpace(line), "listening on ")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sid, err := wire.New(url).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := wire.New(url).Delete(ctx, sid)
	if err != nil || resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	for _, want := range []string{"session created", "session deleted", "shutting down"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
