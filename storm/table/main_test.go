package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/storm"
)

// TestIdlePerAddedSession: the RSS each session added is the slope between
// the smallest and the largest run of a target with both reconnects and no
// delay; other strategies and a single size give no row.
func TestIdlePerAddedSession(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int, reconnect, delay string, rss int64) string {
		r := storm.Result{SessionsSetUp: n, Server: &storm.ServerStats{RSSStart: 10 << 20, RSSIdle: rss}}
		r.Options.Sessions, r.Options.Reconnect, r.Options.ReconnectDelay = n, reconnect, delay
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	files := []string{
		write("a-n100-both", 100, "both", "0s", 20<<20),
		write("a-n1000-both", 1000, "both", "0s", 20<<20+900*80<<10), // 80 KiB per added session
		write("a-n500-both", 500, "both", "0s", 50<<20),
		write("a-n500-resume", 500, "resume", "0s", 90<<20),
		write("a-n500-both-delay1s", 500, "both", "1s", 90<<20),
		write("b-n500-both", 500, "both", "0s", 40<<20),
	}
	var out strings.Builder
	if err := run(files, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "| a | 80.0 | 100 and 1000 sessions |") {
		t.Fatalf("no slope row for a:\n%s", got)
	}
	if strings.Contains(got, "| b |") {
		t.Fatalf("a row for b, stormed at one size only:\n%s", got)
	}
}
