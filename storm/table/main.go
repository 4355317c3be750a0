// Command table prints the Markdown table of mcp-conform storm JSON
// results (make storm): one row per file, named by the file. Then, for each
// target (the name before "-n<N>-") stormed with --reconnect both and no
// delay at two sizes or more, the idle RSS each session added between the
// smallest and the largest: the difference of the two idle RSS over the
// difference of the sizes. Unlike the per-session figure of one run (idle
// minus start, over N), it leaves out what a server process adds once
// whatever its size (code paged in, runtime structures), which differs with
// the binary.
//
//	go run ./storm/table reports/storm/*.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	sizes := map[string][]idle{} // by target
	var targets []string
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
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		fmt.Fprintf(w, "| %s | %.0f | %.0f / %.0f | %s | %s | %s | %d | %d | %d | %d | %s | %s | %.2f | %s |\n",
			name, r.SessionsPerSecond, r.Setup.P50, r.Setup.P99,
			lat(r.Headers, storm.KindResume), lat(r.FirstEvent, storm.KindResume), lat(r.Headers, storm.KindNewGET),
			r.Lost, r.Duplicated, r.ResultsMissing, errs, server, cpu, r.ClientCPUSeconds, verdict)
		if m := targetName.FindStringSubmatch(name); m != nil && r.Server != nil && r.SessionsSetUp > 0 &&
			r.Options.Reconnect == storm.ReconnectBoth && r.Options.ReconnectDelay == "0s" {
			if _, ok := sizes[m[1]]; !ok {
				targets = append(targets, m[1])
			}
			sizes[m[1]] = append(sizes[m[1]], idle{r.SessionsSetUp, r.Server.RSSIdle})
		}
	}
	printed := false
	for _, t := range targets {
		s := sizes[t]
		slices.SortFunc(s, func(a, b idle) int { return a.n - b.n })
		lo, hi := s[0], s[len(s)-1]
		if hi.n == lo.n {
			continue
		}
		if !printed {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "| target | idle RSS per added session, KiB | between |")
			fmt.Fprintln(w, "|---|--:|---|")
			printed = true
		}
		fmt.Fprintf(w, "| %s | %.1f | %d and %d sessions |\n", t, float64(hi.rss-lo.rss)/1024/float64(hi.n-lo.n), lo.n, hi.n)
	}
	return nil
}

// targetName takes the target out of a run's name, as compare.sh names runs.
var targetName = regexp.MustCompile(`^(.+)-n\d+-`)

// idle is a run's size and its server's idle RSS.
type idle struct {
	n   int
	rss int64
}
