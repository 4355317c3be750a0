package storm

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// streamKinds is the order of the stream kinds on the page.
var streamKinds = []string{KindPOST, KindGET, KindResume, KindNewGET}

// WriteHTML writes the result as one self-contained HTML page: what was
// run, the failures, where the notifications arrived (by stream kind; what
// was lost and duplicated, and at which steps) and the figures of the
// console summary.
func (r *Result) WriteHTML(w io.Writer) error { return report.WriteFigures(w, r.page()) }

func (r *Result) page() report.FigurePage {
	o := r.Options
	p := report.FigurePage{
		Title: "mcp-conform storm", Passed: r.Passed(), Failures: r.Failures, Examples: r.Examples,
		Meta: [][2]string{
			{"target", o.URL},
			{"call", fmt.Sprintf("%s %s: %d notifications", o.Tool, compactJSON(o.Arguments), o.Notifications)},
			{"sessions", fmt.Sprintf("%d, %d at a time", o.Sessions, o.Concurrency)},
			{"cut", fmt.Sprintf("after %d notifications, %s; reconnect %s after %s", o.CutAfter, cutBy(o.Cut), o.Reconnect, o.ReconnectDelay)},
			{"log level", logLevel(o.LogLevel)},
			{"started", r.Started.Format(time.RFC3339)},
			{"duration", fmt.Sprintf("%.2fs", r.Seconds)},
		},
	}
	arrived := report.BarChart{Name: "Where the notifications arrived"}
	for _, k := range byKind(r.ArrivedOn) {
		arrived.Bars = append(arrived.Bars, report.Bar{Label: "on " + k, N: r.ArrivedOn[k]})
	}
	beyond := r.Lost - r.LostInFlight()
	arrived.Bars = append(arrived.Bars, report.Bar{Label: "lost", N: beyond, Fail: beyond > 0})
	if n := r.LostInFlight(); n > 0 {
		arrived.Bars = append(arrived.Bars, report.Bar{Label: "lost in flight at the cut", N: n})
	}
	p.Charts = append(p.Charts, arrived)
	if len(r.DuplicatedOn) > 0 {
		dup := report.BarChart{Name: "Duplicates, by the stream the copy arrived on"}
		for _, k := range byKind(r.DuplicatedOn) {
			label := "on " + k
			if k == "result" {
				label = "results"
			}
			dup.Bars = append(dup.Bars, report.Bar{Label: label, N: r.DuplicatedOn[k], Fail: true})
		}
		p.Charts = append(p.Charts, dup)
	}
	if len(r.LostAt) > 0 {
		lost := report.BarChart{Name: "Lost notifications, by step of the call"}
		steps := slices.Collect(maps.Keys(r.LostAt))
		slices.SortFunc(steps, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
		for _, s := range steps {
			lost.Bars = append(lost.Bars, report.Bar{Label: "step " + s, N: r.LostAt[s], Fail: true})
		}
		p.Charts = append(p.Charts, lost)
	}

	msf := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	p.Tables = append(p.Tables,
		report.FigureTable{Name: "Delivery", Head: []string{"expected", "delivered", "lost", "duplicated", "results missing", "calls failed", "sessions complete", "settled after"},
			Rows: [][]string{{itoa(r.Expected), itoa(r.Delivered), itoa(r.Lost), itoa(r.Duplicated), itoa(r.ResultsMissing), itoa(sum(r.CallErrors)),
				fmt.Sprintf("%d of %d", r.SessionsComplete, r.SessionsSetUp), fmt.Sprintf("%.2fs", r.SettleSeconds)}}},
		report.FigureTable{Name: "Setup", Head: []string{"sessions", "in", "sessions/s", "p50 ms", "p99 ms", "max ms"},
			Rows: [][]string{{fmt.Sprintf("%d of %d", r.SessionsSetUp, o.Sessions), fmt.Sprintf("%.2fs", r.SetupSeconds),
				strconv.FormatFloat(r.SessionsPerSecond, 'f', 0, 64), msf(r.Setup.P50), msf(r.Setup.P99), msf(r.Setup.Max)}}},
		report.FigureTable{Name: "The cut", Head: []string{"connections reset", "at", fmt.Sprintf("sessions that had %d notifications", o.CutAfter)},
			Rows: [][]string{{itoa(r.ConnectionsCut), fmt.Sprintf("%.2fs", r.CutAfterSeconds), fmt.Sprintf("%d of %d", r.SessionsReachedCut, r.SessionsSetUp)}}},
	)
	recon := report.FigureTable{Name: "Reconnects, from the cut (ms)",
		Head: []string{"stream", "n", "headers p50", "p99", "max", "first event p50", "p99", "max"}}
	for _, k := range byKind(r.Headers) {
		h, f := r.Headers[k], r.FirstEvent[k]
		recon.Rows = append(recon.Rows, []string{k, itoa(h.N), msf(h.P50), msf(h.P99), msf(h.Max), msf(f.P50), msf(f.P99), msf(f.Max)})
	}
	p.Tables = append(p.Tables, recon)
	if len(r.HTTPErrors) > 0 {
		errs := report.FigureTable{Name: "HTTP errors", Head: []string{"error", "n"}}
		for _, k := range slices.Sorted(maps.Keys(r.HTTPErrors)) {
			errs.Rows = append(errs.Rows, []string{k, itoa(r.HTTPErrors[k])})
		}
		p.Tables = append(p.Tables, errs)
	}
	cpu := report.FigureTable{Name: "Resources", Head: []string{"", "CPU", "RSS"},
		Rows: [][]string{{"client", fmt.Sprintf("%.2fs of %d cores over %.2fs", r.ClientCPUSeconds, r.Cores, r.Seconds), ""}}}
	if s := r.Server; s != nil {
		cpu.Rows = append(cpu.Rows, []string{"server", fmt.Sprintf("%.2fs setup, %.2fs storm", s.SetupCPUSeconds, s.StormCPUSeconds),
			fmt.Sprintf("%.1f MiB before, %.1f MiB idle (%.1f KiB a session), peak %.1f MiB", mib(s.RSSStart), mib(s.RSSIdle), s.IdleKiBPerSession, mib(s.RSSPeak))})
	}
	p.Tables = append(p.Tables, cpu)
	return p
}

// byKind is the keys of m, the known stream kinds first in their order.
func byKind[V any](m map[string]V) []string {
	rank := func(k string) int {
		if i := slices.Index(streamKinds, k); i >= 0 {
			return i
		}
		return len(streamKinds)
	}
	keys := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	return keys
}

func itoa(n int) string { return strconv.Itoa(n) }

// logLevel describes the storm's logging/setLevel.
func logLevel(level string) string {
	if level == "" {
		return "not set (the server's default)"
	}
	return level + " (logging/setLevel at setup)"
}
