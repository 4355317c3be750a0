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
		return writeResult(t, dir, name, r)
	}
	files := []string{
		write("a-n100-both", 100, "both", "0s", 20<<20),
		write("a-n1000-both", 1000, "both", "0s", 20<<20+900*80<<10), // 80 KiB per added session
		write("a-n500-both", 500, "both", "0s", 50<<20),
		write("a-n500-resume", 500, "resume", "0s", 90<<20),
		write("a-n500-both-delay1s", 500, "both", "1s", 90<<20),
		write("b-n500-both", 500, "both", "0s", 40<<20),
		proxyCut(t, write("a-n2000-both-proxy", 2000, "both", "0s", 90<<20)),
	}
	var out strings.Builder
	if err := run(files, &out, "a", "b"); err != nil {
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

// TestRatios: A over B for each size, the median of the rounds' ratios with
// their range, marked where the median misses its target; runs of other
// strategies and rounds without a partner do not count.
func TestRatios(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int, reconnect string, perSecond, stormCPU float64) string {
		r := storm.Result{SessionsSetUp: n, SessionsPerSecond: perSecond,
			Server:  &storm.ServerStats{RSSStart: 10 << 20, RSSIdle: 50 << 20, IdleKiBPerSession: 80, SetupCPUSeconds: 1, StormCPUSeconds: stormCPU},
			Headers: map[string]storm.Latencies{storm.KindResume: {N: n, P50: 100}}}
		r.Options.Sessions, r.Options.Reconnect, r.Options.ReconnectDelay = n, reconnect, "0s"
		return writeResult(t, dir, name, r)
	}
	files := []string{
		// Storm CPU ratios 1.0, 1.3 and 1.2: median 1.2, over 1.1.
		write("ref-n500-both-r1", 500, "both", 1000, 1.0), write("go-n500-both-r1", 500, "both", 1000, 1.0),
		write("ref-n500-both-r2", 500, "both", 900, 1.3), write("go-n500-both-r2", 500, "both", 1000, 1.0),
		write("ref-n500-both-r3", 500, "both", 1000, 1.2), write("go-n500-both-r3", 500, "both", 1000, 1.0),
		write("ref-n500-both-r4", 500, "both", 1, 9), // no partner
		write("ref-n500-resume-r1", 500, "resume", 1, 9), write("go-n500-resume-r1", 500, "resume", 1000, 1),
		proxyCut(t, write("ref-n500-both-proxy", 500, "both", 1, 9)), proxyCut(t, write("go-n500-both-proxy", 500, "both", 1000, 1)),
	}
	var out strings.Builder
	if err := run(files, &out, "ref", "go"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	want := "| 500 | 3 | 1.00 (0.90-1.00) | 1.00 (1.00-1.00) | 1.00 (1.00-1.00) | 1.20 (1.00-1.30) MISSED | 1.00 (1.00-1.00) |"
	if !strings.Contains(got, want) {
		t.Fatalf("want the row\n%s\nin\n%s", want, got)
	}
	if !strings.Contains(got, "| ref / go, N | rounds | setup throughput |") {
		t.Fatalf("no ratio table header:\n%s", got)
	}
}

// proxyCut rewrites the result in file as a run with --cut proxy.
func proxyCut(t *testing.T, file string) string {
	t.Helper()
	var r storm.Result
	b, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.Options.Cut = storm.CutProxy
	return writeResult(t, filepath.Dir(file), strings.TrimSuffix(filepath.Base(file), ".json"), r)
}

// writeResult writes r as dir/name.json, as a storm's --json would.
func writeResult(t *testing.T, dir, name string, r storm.Result) string {
	t.Helper()
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

// TestLostInFlight: a new-get run's losses in flight at the cut are shown
// beside the total, so that a passing run with losses reads as such.
func TestLostInFlight(t *testing.T) {
	dir := t.TempDir()
	r := storm.Result{Lost: 7, InFlight: &storm.InFlight{Lost: 7, Sessions: 7}}
	r.Options.Reconnect = storm.ReconnectNewGET
	var out strings.Builder
	if err := run([]string{writeResult(t, dir, "ref-n500-new-get", r)}, &out, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| 7 (7 in flight) |") || !strings.Contains(out.String(), "| pass |") {
		t.Fatalf("the row does not say the 7 lost were in flight:\n%s", out.String())
	}
}
