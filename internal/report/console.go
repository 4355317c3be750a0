package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Marks are the short result words of the console.
var marks = map[Verdict]string{
	Pass: "PASS", Fail: "FAIL", Warn: "WARN", Info: "INFO", Skip: "SKIP",
	ExpectedFailure: "XFAIL", Stale: "STALE", Inconclusive: "INCONC", Blocked: "BLOCKED",
}

// Mark is the console word for a verdict.
func Mark(v Verdict) string { return marks[v] }

// ProgressLine is the line printed as each check finishes.
func ProgressLine(n, total int, c Check) string {
	width := 24 // the longest IDs
	if c.Revision != "" {
		width += len("@2026-07-28")
	}
	line := fmt.Sprintf("[%2d/%d] %-7s %-*s %6.2fs", n, total, Mark(c.Verdict), width, c.Name(), c.Seconds)
	switch {
	case c.Verdict != Pass && c.Message != "":
		line += "  " + firstLine(c.Message)
	case c.Retried != "":
		line += "  passed on a retry; the first attempt was inconclusive: " + firstLine(c.Retried)
	}
	return line
}

// WriteSummary writes the table of checks (ID, level, result, duration),
// then the reasons of failures and warnings, root causes before the
// checks they blocked, then the counts. With
// exchanges, failed checks' exchange logs follow their reasons.
func WriteSummary(w io.Writer, r *Run, exchanges bool) {
	fmt.Fprintf(w, "\nmcp-conform %s: %s (check set %s, protocol %s%s)\n\n", r.Mode, r.Target, r.CheckSet, r.ProtocolVersion, map[bool]string{true: ", strict"}[r.Strict])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tRESULT\tTIME")
	for _, c := range r.Checks {
		if c.Unselected() {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fs\n", c.Name(), c.Level, Mark(c.Verdict), c.Seconds)
	}
	tw.Flush()
	first, fixes := true, false
	for _, c := range RootsFirst(r.Checks) {
		if c.Verdict == Pass || c.Verdict == Skip {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nDetails:")
			first = false
		}
		fmt.Fprintf(w, "\n%s %s (%s): %s\n", Mark(c.Verdict), c.Name(), c.Level, c.Summary)
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(strings.TrimSpace(c.Message), "\n", "\n  "))
		for _, f := range c.Fixes {
			fmt.Fprintf(w, "  the fix if it is built on the %s: %s\n", f.SDK, f.Ref)
			fixes = true
		}
		if exchanges && c.Exchange != "" && c.Verdict.FailsRun() {
			fmt.Fprintf(w, "  exchange:\n    %s\n", strings.ReplaceAll(strings.TrimRight(c.Exchange, "\n"), "\n", "\n    "))
		}
	}
	if fixes {
		fmt.Fprintf(w, "\n%s\n", FixesNote)
	}
	counts, unselected := verdictCounts(r)
	result := r.Result()
	fmt.Fprintf(w, "\n%s: %d checks run: %s (%.1fs)", result, len(r.Checks)-unselected, strings.Join(counts, ", "), r.Seconds)
	if r.Counts[Blocked] > 0 {
		fmt.Fprintf(w, "; %d distinct %s", r.Defects, map[bool]string{true: "defect", false: "defects"}[r.Defects == 1])
	}
	if unselected > 0 {
		fmt.Fprintf(w, "; %d not selected", unselected)
	}
	fmt.Fprintln(w)
	if result == "NOTHING GRADED" {
		fmt.Fprintf(w, "No check judged the target: %s\n", r.NothingGradedWhy())
	}
}

// NotSelectedMessage is the message of a check the filters left out
// (cause NotSelected).
const NotSelectedMessage = "not selected by --checks, --label-filter or --focus"

// Unselected reports a check the filters left out.
func (c Check) Unselected() bool { return c.Verdict == Skip && c.Cause == NotSelected }

// CountUnselected is how many of cs the filters left out.
func CountUnselected(cs []Check) int {
	n := 0
	for _, c := range cs {
		if c.Unselected() {
			n++
		}
	}
	return n
}

// verdictCounts is the run's count of each verdict that occurred ("3
// pass"), in display order, less the checks the filters left out, and
// how many those were.
func verdictCounts(r *Run) (counts []string, unselected int) {
	unselected = CountUnselected(r.Checks)
	for _, v := range Verdicts {
		n := r.Counts[v]
		if v == Skip {
			n -= unselected
		}
		if n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return counts, unselected
}
