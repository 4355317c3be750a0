// Command table prints the Markdown table of mcp-conform storm JSON
// results (make storm): one row per file, named by the file. Then, for each
// target (the name before "-n<N>-") stormed with --reconnect both, no
// delay and the client's own cut (not --cut proxy, whose proxy runs in the
// client) at two sizes or more, the idle RSS each session added between the
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
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/storm"
)

func main() {
	vs := flag.String("vs", "reference,gosdk", "the two targets to compare, A,B: A's figures over B's")
	flag.Parse()
	a, b, ok := strings.Cut(*vs, ",")
	if !ok || a == "" || b == "" {
		fmt.Fprintln(os.Stderr, "table: -vs wants two targets, A,B")
		os.Exit(2)
	}
	if err := run(flag.Args(), os.Stdout, a, b); err != nil {
		fmt.Fprintln(os.Stderr, "table:", err)
		os.Exit(1)
	}
}

func run(files []string, w io.Writer, a, b string) error {
	if len(files) == 0 {
		return fmt.Errorf("usage: table RESULT.json...")
	}
	fmt.Fprintln(w, "| run | sessions/s | setup p50/p99 ms | resume cut->headers p50/p99 ms | resume cut->first event p50/p99 ms | new GET cut->headers p50/p99 ms | lost | dup | results missing | HTTP errors | server idle RSS MiB (KiB/session) | server CPU setup / storm s | client CPU s | verdict |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	sizes := map[string][]idle{} // by target
	var targets []string
	both := map[string]storm.Result{} // runs with both reconnects and no delay, by name
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
		lost := fmt.Sprint(r.Lost)
		if n := r.LostInFlight(); n > 0 {
			lost += fmt.Sprintf(" (%d in flight)", n)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		fmt.Fprintf(w, "| %s | %.0f | %.0f / %.0f | %s | %s | %s | %s | %d | %d | %d | %s | %s | %.2f | %s |\n",
			name, r.SessionsPerSecond, r.Setup.P50, r.Setup.P99,
			lat(r.Headers, storm.KindResume), lat(r.FirstEvent, storm.KindResume), lat(r.Headers, storm.KindNewGET),
			lost, r.Duplicated, r.ResultsMissing, errs, server, cpu, r.ClientCPUSeconds, verdict)
		if m := targetName.FindStringSubmatch(name); m != nil && r.Server != nil && r.SessionsSetUp > 0 &&
			r.Options.Reconnect == storm.ReconnectBoth && r.Options.ReconnectDelay == "0s" &&
			r.Options.Cut != storm.CutProxy { // "" before --cut existed
			if _, ok := sizes[m[1]]; !ok {
				targets = append(targets, m[1])
			}
			sizes[m[1]] = append(sizes[m[1]], idle{r.SessionsSetUp, r.Server.RSSIdle})
			both[name] = r
		}
	}
	printed := false
	for _, t := range targets {
		lo, hi := medianIdle(sizes[t])
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
	ratios(w, both, a, b)
	return nil
}

// medianIdle returns the median idle RSS at the smallest and at the largest
// size of runs.
func medianIdle(runs []idle) (lo, hi idle) {
	bySize := map[int][]int64{}
	for _, r := range runs {
		bySize[r.n] = append(bySize[r.n], r.rss)
	}
	ns := slices.Sorted(maps.Keys(bySize))
	at := func(n int) idle {
		rss := make([]float64, len(bySize[n]))
		for i, v := range bySize[n] {
			rss[i] = float64(v)
		}
		return idle{n, int64(median(rss))}
	}
	return at(ns[0]), at(ns[len(ns)-1])
}

// ratio is one figure compared between two targets.
type ratio struct {
	name   string
	target float64
	atMost bool // the ratio must be at most target (else at least)
	of     func(storm.Result) float64
}

var compared = []ratio{
	{"setup throughput", 0.9, false, func(r storm.Result) float64 { return r.SessionsPerSecond }},
	{"setup CPU", 0, true, func(r storm.Result) float64 { return r.Server.SetupCPUSeconds }},
	{"idle RSS per session", 1.15, true, func(r storm.Result) float64 { return r.Server.IdleKiBPerSession }},
	{"storm CPU", 1.1, true, func(r storm.Result) float64 { return r.Server.StormCPUSeconds }},
	{"resume p50 (cut->headers)", 1.2, true, func(r storm.Result) float64 { return r.Headers[storm.KindResume].P50 }},
}

// ratios prints, per size, a's figures over b's: the median over the
// rounds where both ran, the range, and the verdict against the target.
func ratios(w io.Writer, both map[string]storm.Result, a, b string) {
	pairs := map[int][][2]storm.Result{} // by size
	for name, ra := range both {
		m := runName.FindStringSubmatch(name)
		if m == nil || m[1] != a {
			continue
		}
		if rb, ok := both[b+m[2]]; ok {
			pairs[ra.SessionsSetUp] = append(pairs[ra.SessionsSetUp], [2]storm.Result{ra, rb})
		}
	}
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %s / %s, N | rounds | %s |\n", a, b, strings.Join(names(), " | "))
	fmt.Fprintf(w, "|---|--:|%s\n", strings.Repeat("--:|", len(compared)))
	for _, n := range slices.Sorted(maps.Keys(pairs)) {
		cells := make([]string, len(compared))
		for i, c := range compared {
			var rs []float64
			for _, p := range pairs[n] {
				if x, y := c.of(p[0]), c.of(p[1]); y > 0 {
					rs = append(rs, x/y)
				}
			}
			cells[i] = verdict(c, rs)
		}
		fmt.Fprintf(w, "| %d | %d | %s |\n", n, len(pairs[n]), strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "Median over the rounds (range in parentheses); targets:")
	for _, c := range compared {
		if c.target > 0 {
			op := ">="
			if c.atMost {
				op = "<="
			}
			fmt.Fprintf(w, " %s %s %.2f;", c.name, op, c.target)
		}
	}
	fmt.Fprintln(w, " a median that misses its target is marked MISSED.")
}

// verdict formats the median of rs with its range, marked when it misses
// c's target.
func verdict(c ratio, rs []float64) string {
	if len(rs) == 0 {
		return "-"
	}
	m := median(rs)
	cell := fmt.Sprintf("%.2f (%.2f-%.2f)", m, slices.Min(rs), slices.Max(rs))
	if c.target > 0 && (c.atMost && m > c.target || !c.atMost && m < c.target) {
		cell += " MISSED"
	}
	return cell
}

func names() []string {
	out := make([]string, len(compared))
	for i, c := range compared {
		out[i] = c.name
	}
	return out
}

// median of xs (not empty); the mean of the middle two for an even count.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// targetName takes the target out of a run's name, as compare.sh names runs.
var targetName = regexp.MustCompile(`^(.+)-n\d+-`)

// runName splits a run's name into its target and the rest (size, strategy,
// round), which names the same run of another target.
var runName = regexp.MustCompile(`^(.+?)(-n\d+-.*)$`)

// idle is a run's size and its server's idle RSS.
type idle struct {
	n   int
	rss int64
}
