package cmdline

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestRun serves in-process: one "listening on" line, a working endpoint,
// and a clean return (nil) when its context ends, an open GET stream
// notwithstanding.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, "reference-server", []string{"--addr", "127.0.0.1:0", "--path", "/x/mcp", "--grace-period", "1m"}, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading stdout: %v (stderr %s)", err, stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/x/mcp") {
		t.Fatalf("stdout line %q", line)
	}
	go io.Copy(io.Discard, pr)
	c := wire.New(url)
	sid, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenGET(ctx, sid, "") // a hanging stream must not block shutdown
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v, stderr %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
