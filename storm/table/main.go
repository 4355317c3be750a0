// Command table prints the Markdown table of mcp-conform storm JSON
// results (make storm): one row per file, named by the file.
//
//	go run ./storm/table reports/storm/*.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-conform/mcp-conform/storm"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
}

func run(files []string, w io.Writer) error {
	if len(files) == 0 {
		return fmt.Errorf("usage: table RESULT.json...")
	}
	fmt.Fprintln(w, "| run | sessions/s | setup p50/p99 ms | resume cut->headers p50/p99 ms | resume cut->first event p50/p99 ms | new GET cut->headers p50/p99 ms | lost | dup | results missing | HTTP errors | server idle RSS MiB (KiB/session) | server CPU setup / storm s | client CPU s | verdict |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r storm.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		lat := func(m map[string]storm.Latencies, k string) string {
			l, ok := m[k]
			if !ok || l.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f / %.0f", l.P50, l.P99)
		}
		server, cpu := "-", "-"
		if s := r.Server; s != nil {
			server = fmt.Sprintf("%.1f (%.0f)", float64(s.RSSIdle)/(1<<20), s.IdleKiBPerSession)
			cpu = fmt.Sprintf("%.2f / %.2f", s.SetupCPUSeconds, s.StormCPUSeconds)
		}
		errs := 0
		for _, n := range r.HTTPErrors {
			errs += n
		}
		verdict := "pass"
		if len(r.Failures) > 0 {
			verdict = "FAIL: " + strings.Join(r.Failures, "; ")
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f / %.0f | %s | %s | %s | %d | %d | %d | %d | %s | %s | %.2f | %s |\n",
			strings.TrimSuffix(filepath.Base(f), ".json"), r.SessionsPerSecond, r.Setup.P50, r.Setup.P99,
			lat(r.Headers, storm.KindResume), lat(r.FirstEvent, storm.KindResume), lat(r.Headers, storm.KindNewGET),
			r.Lost, r.Duplicated, r.ResultsMissing, errs, server, cpu, r.ClientCPUSeconds, verdict)
	}
	return nil
}
