package harness

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// DefaultParallel is how many checks run at once unless told otherwise.
// Checks mostly wait on the target's timings, so more than the cores fit.
const DefaultParallel = 12

// DefaultMargin is what a check's deadline adds to twice its need, before
// the target's round trips are counted (see engine.margin).
const DefaultMargin = 10 * time.Second

// engine runs the checks of one side: independent ones several at a time,
// exclusive ones alone after them; it prints a progress line as each check
// finishes and gives each its verdict by level.
type engine struct {
	parallel int
	// margin is added to twice a check's need to make its deadline.
	margin   time.Duration
	strict   bool
	expected map[string]bool
	progress io.Writer
	// verbose, when set, gets every check's exchange log as it finishes.
	verbose io.Writer
}

// run runs the selected checks and returns one report.Check per check, in
// catalogue order; a check not selected is a skip that says so.
func (en *engine) run(ctx context.Context, checks []kit.Check, selected func(catalogue.Entry) bool) []report.Check {
	results := make(map[string]report.Check, len(checks))
	var pool, alone []kit.Check
	for _, c := range checks {
		switch {
		case !selected(c.Entry):
			results[c.Entry.ID] = en.verdict(c.Entry, kit.Result{State: kit.Skipped, Message: report.NotSelected()})
		case c.Entry.Exclusive:
			alone = append(alone, c)
		default:
			pool = append(pool, c)
		}
	}
	// Longest first, so the run ends soon after its longest check.
	slices.SortStableFunc(pool, func(a, b kit.Check) int { return cmp.Compare(b.Need, a.Need) })

	var mu sync.Mutex
	finished, total := 0, len(pool)+len(alone)
	done := func(c kit.Check, r kit.Result) {
		v := en.verdict(c.Entry, r)
		mu.Lock()
		defer mu.Unlock()
		results[c.Entry.ID] = v
		finished++
		fmt.Fprintln(en.progress, report.ProgressLine(finished, total, v))
		if en.verbose != nil {
			fmt.Fprintf(en.verbose, "=== %s (%s)\n%s", c.Entry.ID, report.Mark(v.Verdict), r.Exchange)
		}
	}
	runOne := func(c kit.Check) {
		if ctx.Err() != nil {
			done(c, kit.Result{State: kit.Skipped, Message: "not run: " + context.Cause(ctx).Error()})
			return
		}
		done(c, kit.Execute(ctx, c, c.Deadline(en.margin)))
	}

	queue := make(chan kit.Check)
	var wg sync.WaitGroup
	for range max(1, min(en.parallel, len(pool))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range queue {
				runOne(c)
			}
		}()
	}
	for _, c := range pool {
		queue <- c
	}
	close(queue)
	wg.Wait()
	for _, c := range alone {
		runOne(c)
	}

	out := make([]report.Check, 0, len(checks))
	for _, c := range checks {
		out = append(out, results[c.Entry.ID])
	}
	return out
}

// verdict gives a check's result its verdict: its level decides what a
// failure means, and the baseline what an expected one means.
func (en *engine) verdict(e catalogue.Entry, r kit.Result) report.Check {
	c := report.Check{
		ID: e.ID, Level: string(e.Level), Section: e.Section, Profile: string(e.Profile()),
		Summary: e.Summary, SpecRef: e.SpecRef, Seconds: r.Took.Seconds(), Timeline: r.Timeline,
	}
	switch r.State {
	case kit.Passed:
		c.Verdict = report.Pass
		if en.expected[e.ID] {
			c.Verdict = report.Stale
			c.Message = "listed in --expected-failures but passed: remove it from the baseline"
		}
	case kit.Skipped:
		c.Verdict, c.Message = report.Skip, r.Message
	default: // failed or abandoned
		c.Message, c.Location, c.Exchange = r.Message, r.Location, r.Exchange
		switch {
		case en.expected[e.ID]:
			c.Verdict = report.ExpectedFailure
		case e.Required(en.strict):
			c.Verdict = report.Fail
		case e.Level == catalogue.Should:
			c.Verdict = report.Warn
		default:
			c.Verdict = report.Info
		}
	}
	return c
}

// selector selects the checks of one side by profile, label expression
// and focus.
func selector(side catalogue.Side, profile catalogue.Profile, labels func([]string) bool, focus func(catalogue.Entry) bool) func(catalogue.Entry) bool {
	return func(e catalogue.Entry) bool {
		return e.Side == side &&
			(profile == catalogue.ProfileAll || e.Profile() == profile) &&
			(labels == nil || labels(e.Labels())) &&
			(focus == nil || focus(e))
	}
}

// idList joins IDs for messages.
func idList(ids []string) string { return strings.Join(ids, ", ") }
