package cmdline

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestRevisionsFlag: a comma-separated or repeated list of known
// revisions; an unknown one is refused, naming those known.
func TestRevisionsFlag(t *testing.T) {
	var l revisionList
	for _, v := range []string{"2025-11-25, 2025-06-18", "2026-07-28", "2025-11-25"} {
		if err := l.Set(v); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	if got, want := l.String(), "2025-11-25,2025-06-18,2026-07-28"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	for _, v := range []string{"2025-01-01", "", "legacy", "2026-07-28,"} {
		if err := l.Set(v); err == nil || !strings.Contains(err.Error(), "want a comma-separated list of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05") {
			t.Errorf("%q: got %v, want an error naming the known revisions", v, err)
		}
	}
	err := Run(context.Background(), "reference-server", []string{"--revisions", "2025-13-01"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `unknown protocol revision "2025-13-01"`) {
		t.Fatalf("Run with --revisions 2025-13-01: %v", err)
	}
}

// TestRevisionsServed: --revisions reaches the server: speaking
// 2026-07-28 alone, it refuses initialize with -32022.
func TestRevisionsServed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "reference-server", []string{"--addr", "127.0.0.1:0", "--log-level", "error", "--revisions", "2026-07-28"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading stdout: %v", err)
	}
	go io.Copy(io.Discard, pr)
	c := wire.New(strings.TrimPrefix(strings.TrimSpace(line), "listening on "))
	resp, err := c.Initialize(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := resp.Result(); err != nil || resp.Status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32022 || resp.SessionID() != "" {
		t.Fatalf("initialize: HTTP %d %v %+v, session %q; want 400 and -32022, no session", resp.Status, err, m.Error, resp.SessionID())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
