package harness

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/inert"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// DefaultParallel is how many checks of a side run at once unless told
// otherwise; it follows the cores the harness may use. A server check
// mostly waits on the target's timings, so five a core fit (what a busy
// machine stretches past a check's premise is inconclusive, retried); a client
// check runs the client under test, a process that needs a core of its
// own to keep to the timings the check judges.
func DefaultParallel(side catalogue.Side) int {
	cores := runtime.GOMAXPROCS(0)
	if side == catalogue.Client {
		return max(1, cores)
	}
	return max(2, 5*cores)
}

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
	// revision is the run's protocol revision when it has one, against
	// which an --expected-failures entry ID@revision is matched in a job
	// of no revision of its own.
	revision string
	progress io.Writer
	// verbose, when set, gets every check's exchange log as it finishes.
	verbose io.Writer
	// gone, when set, says whether the target's process has ended on its
	// own (processTarget.Gone): a check that did not pass by then could
	// not reach it, and is inconclusive, naming that.
	gone func() error
	// silence, when set, says whether the target stopped answering, and
	// the last moment it was seen answering before that (liveness): a
	// check that ended after that moment without passing may have been
	// failed by the silence, and is inconclusive, naming it, whatever
	// --parallel let it start before the run was ended.
	silence func() (error, time.Time)
	// settle, when set, waits until the liveness watcher has decided
	// whether a target silent at the end of the checks stopped answering.
	settle func(context.Context)
}

// job is a check bound to the protocol revision it runs at: "" in a run
// of one revision, where checks are named by their IDs alone.
type job struct {
	kit.Check
	revision string
}

// name is the job's check's name in the reports (report.Check.Name).
func (j job) name() string { return checkName(j.Entry.ID, j.revision) }

// checkName is check id's name at revision ("" for a run of one).
func checkName(id, revision string) string {
	return report.Check{ID: id, Revision: revision}.Name()
}

// run runs the selected checks and returns one report.Check per check, in
// catalogue order; a check not selected is a skip that says so.
func (en *engine) run(ctx context.Context, checks []kit.Check, selected func(catalogue.Entry) bool) []report.Check {
	jobs := make([]job, len(checks))
	for i, c := range checks {
		jobs[i] = job{Check: c}
	}
	return en.runJobs(ctx, jobs, func(j job) bool { return selected(j.Entry) })
}

// runJobs runs the selected jobs and returns one report.Check per job, in
// the order given; a job not selected is a skip that says so.
func (en *engine) runJobs(ctx context.Context, jobs []job, selected func(job) bool) []report.Check {
	results := make(map[string]report.Check, len(jobs))
	var pool, alone []job
	for _, j := range jobs {
		switch {
		case !selected(j):
			results[j.name()] = en.verdict(j.Entry, j.revision, kit.Result{State: kit.Skipped, Message: report.NotSelectedMessage, Cause: report.NotSelected})
		case j.Entry.Exclusive:
			alone = append(alone, j)
		default:
			pool = append(pool, j)
		}
	}
	// Longest first, so the run ends soon after its longest check.
	slices.SortStableFunc(pool, func(a, b job) int { return cmp.Compare(b.Need, a.Need) })

	var mu sync.Mutex
	finished, total := 0, len(pool)+len(alone)
	answeredAt := map[string]struct {
		r  kit.Result
		at time.Time
	}{}
	done := func(j job, r kit.Result) {
		// A skip for what the target answered (not offered, not observed)
		// is as suspect as a failure; one for the run's own settings is not.
		answered := r.State == kit.Failed || r.State == kit.Abandoned ||
			(r.State == kit.Skipped && (r.Cause == report.NotOffered || r.Cause == report.Unobservable || r.Cause == report.Interfered))
		if answered && en.gone != nil {
			if err := en.gone(); err != nil {
				r = kit.Result{State: kit.Inconclusive, Message: err.Error() + "\n(what the check saw: " + firstLine(r.Message) + ")",
					Exchange: r.Exchange, Timeline: r.Timeline, Took: r.Took}
			}
		}
		v := en.verdict(j.Entry, j.revision, r)
		mu.Lock()
		defer mu.Unlock()
		results[j.name()] = v
		if answered {
			answeredAt[j.name()] = struct {
				r  kit.Result
				at time.Time
			}{r, time.Now()}
		}
		finished++
		fmt.Fprintln(en.progress, report.ProgressLine(finished, total, v))
		if en.verbose != nil {
			fmt.Fprintf(en.verbose, "=== %s (%s)\n%s", j.name(), report.Mark(v.Verdict), r.Exchange)
		}
	}
	// finishOne records r, j's result; an inconclusive one is had once
	// more, with fresh sessions: what the harness could not observe once
	// (its own delay, a busy machine) it often can the second time.
	finishOne := func(j job, r kit.Result) {
		if r.State == kit.Inconclusive && ctx.Err() == nil {
			first := r
			r = kit.Execute(ctx, j.Check, j.Deadline(en.margin))
			r.Retried, r.Took = first.Message, first.Took+r.Took
		}
		done(j, r)
	}
	runOne := func(j job) {
		if ctx.Err() != nil {
			done(j, kit.Result{State: kit.Skipped, Message: "not run: " + context.Cause(ctx).Error()})
			return
		}
		finishOne(j, kit.Execute(ctx, j.Check, j.Deadline(en.margin)))
	}

	// A check whose evidence other checks beside it took (report.Interfered)
	// is run again alone once the pool is done: its verdict must not depend
	// on what ran beside it (--parallel).
	var again []job
	inPool := func(j job) {
		if ctx.Err() != nil {
			runOne(j)
			return
		}
		r := kit.Execute(ctx, j.Check, j.Deadline(en.margin))
		if r.State == kit.Skipped && r.Cause == report.Interfered && en.parallel > 1 && ctx.Err() == nil {
			mu.Lock()
			again = append(again, j)
			mu.Unlock()
			if en.verbose != nil {
				fmt.Fprintf(en.verbose, "=== %s: run again alone after the others: %s\n", j.name(), r.Message)
			}
			return
		}
		finishOne(j, r)
	}

	queue := make(chan job)
	var wg sync.WaitGroup
	for range max(1, min(en.parallel, len(pool))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				inPool(j)
			}
		}()
	}
	for _, j := range pool {
		queue <- j
	}
	close(queue)
	wg.Wait()
	for _, j := range slices.Concat(again, alone) {
		runOne(j)
	}

	if en.settle != nil {
		en.settle(ctx)
	}
	if en.silence != nil {
		if why, after := en.silence(); why != nil {
			for _, j := range jobs {
				if a, ok := answeredAt[j.name()]; ok && a.at.After(after) {
					results[j.name()] = en.verdict(j.Entry, j.revision, kit.Result{State: kit.Inconclusive,
						Message: why.Error() + "\n(what the check saw: " + firstLine(a.r.Message) + ")", Exchange: a.r.Exchange, Timeline: a.r.Timeline, Took: a.r.Took})
				}
			}
		}
	}
	block(results)
	out := make([]report.Check, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, results[j.name()])
	}
	return out
}

// block marks as blocked each check that did not pass while a check its
// premise depends on (catalogue.Entry.DependsOn) failed at least as
// severely, at the same revision: the dependent's result follows from
// that root cause, which the message names first. results are keyed by
// report.Check.Name. A root that is itself blocked passes its
// roots on. A root less severe than the dependent (a SHOULD warning under
// a failed MUST, a failure expected by the baseline under a new one)
// blocks nothing, so blocking never turns a failing run into a passing one.
func block(results map[string]report.Check) {
	// roots finds the root causes of id's result on the verdicts as the
	// checks gave them: a failed dependency that is itself blocked passes
	// its own roots on.
	memo := map[string][]report.Check{}
	var roots func(name string) []report.Check
	roots = func(name string) []report.Check {
		if r, ok := memo[name]; ok {
			return r
		}
		memo[name] = nil // a cycle (the catalogue test forbids them) ends here
		var out []report.Check
		c := results[name]
		for _, dep := range dependencies(c) {
			depName := checkName(dep, c.Revision)
			r, ok := results[depName]
			if !ok || severity(r.Verdict) == 0 {
				continue
			}
			if above := severe(roots(depName), r.Verdict); len(above) > 0 {
				out = append(out, above...)
			} else {
				out = append(out, r)
			}
		}
		memo[name] = out
		return out
	}
	blocked := map[string][]string{}
	for name, c := range results {
		for _, r := range severe(roots(name), c.Verdict) {
			blocked[name] = append(blocked[name], r.Name())
		}
	}
	for name, by := range blocked {
		c := results[name]
		slices.Sort(by)
		by = slices.Compact(by)
		var why []string
		for _, r := range by {
			why = append(why, fmt.Sprintf("%s (%s: %s)", r, results[r].Verdict, firstLine(results[r].Message)))
		}
		c.BlockedBy = by
		premise := "this check's premise depends on it"
		if p := catalogue.Premise(c.Premise); p != "" && p != catalogue.Own {
			premise = "this check's failed step stood on it (" + p.Says() + ")"
		}
		c.Message = inert.Bound("blocked by "+strings.Join(why, "; ")+": "+premise+", so fix that first.\n"+
			"This check's own result ("+string(c.Verdict)+"): "+c.Message, report.MaxMessage)
		c.Verdict = report.Blocked
		results[name] = c
	}
}

// dependencies are the checks c's result may be blocked by: those its
// premise depends on (catalogue.Entry.DependsOn), and the root of the
// premise its failed step stood on, if any.
func dependencies(c report.Check) []string {
	if p := catalogue.Premise(c.Premise); p == catalogue.Own || (p != "" && p.Root() == c.ID) {
		return nil // the failed step was the check's own, or stood on what the check itself grades
	}
	deps := suites.MustLookup(c.ID).DependsOn
	if p := catalogue.Premise(c.Premise); p != "" && p.Root() != c.ID && !slices.Contains(deps, p.Root()) {
		deps = append(slices.Clone(deps), p.Root())
	}
	return deps
}

// severe keeps the roots at least as severe as a dependent's verdict v;
// none when v is not a failure.
func severe(roots []report.Check, v report.Verdict) []report.Check {
	if severity(v) == 0 {
		return nil
	}
	var out []report.Check
	for _, r := range roots {
		if severity(r.Verdict) >= severity(v) {
			out = append(out, r)
		}
	}
	return out
}

// severity orders the verdicts a root cause can have or block: 0 for
// the others.
func severity(v report.Verdict) int {
	switch v {
	case report.Fail:
		return 3
	case report.Warn, report.ExpectedFailure:
		return 2
	case report.Info:
		return 1
	}
	return 0
}

// firstLine is the first line of a message.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// verdict gives a check's result at revision ("" in a run of one) its
// verdict: its level decides what a failure means, and the baseline what
// an expected one means.
func (en *engine) verdict(e catalogue.Entry, revision string, r kit.Result) report.Check {
	c := report.Check{
		ID: e.ID, Level: string(e.Level), Section: e.Section, CheckSet: string(e.CheckSet()),
		Summary: e.Summary, SpecRef: e.SpecRef, Seconds: r.Took.Seconds(), Timeline: r.Timeline,
		Retried: r.Retried, Revision: revision,
	}
	expected := en.expects(e.ID, revision)
	// What a check quotes of a target is bounded here, for every check.
	r.Message = inert.Bound(r.Message, report.MaxMessage)
	c.Retried = inert.Bound(c.Retried, report.MaxMessage)
	switch r.State {
	case kit.Inconclusive:
		// Never the target's failure, listed in the baseline or not.
		c.Verdict, c.Cause = report.Inconclusive, report.Unobservable
		c.Message, c.Exchange = "could not observe the behaviour: "+r.Message, r.Exchange
		if r.Retried != "" {
			c.Message = "could not observe the behaviour, on a retry either: " + r.Message
			if r.Retried != r.Message {
				c.Message += "\n(the first attempt: " + r.Retried + ")"
			}
		}
		c.Message = inert.Bound(c.Message, report.MaxMessage)
		return c
	case kit.Passed:
		c.Verdict = report.Pass
		if expected {
			c.Verdict = report.Stale
			c.Message = "listed in --expected-failures but passed: remove it from the baseline"
		}
	case kit.Skipped:
		c.Verdict, c.Message, c.Cause = report.Skip, r.Message, r.Cause
	default: // failed or abandoned
		c.Message, c.Location, c.Exchange = r.Message, r.Location, r.Exchange
		c.Premise = string(r.Premise)
		for _, r := range catalogue.Recipes(e.ID) {
			c.Fixes = append(c.Fixes, report.Fix{SDK: r.SDK, Ref: r.Ref})
		}
		switch {
		case expected:
			c.Verdict = report.ExpectedFailure
		case e.Required(en.strict):
			c.Verdict = report.Fail
		case e.Level == catalogue.Should:
			c.Verdict = report.Warn
		default:
			c.Verdict = report.Info
		}
	}
	c.Message = inert.Bound(c.Message, report.MaxMessage)
	return c
}

// expects reports whether the baseline lists check id at revision: by
// its bare ID (every revision) or as id@revision.
func (en *engine) expects(id, revision string) bool {
	if revision == "" {
		revision = en.revision
	}
	return en.expected[id] || (revision != "" && en.expected[id+"@"+revision])
}

// selector selects the checks of one side by profile, label expression
// and focus.
func selector(side catalogue.Side, profile catalogue.CheckSet, labels func([]string) bool, focus func(catalogue.Entry) bool) func(catalogue.Entry) bool {
	return func(e catalogue.Entry) bool {
		return e.Side == side &&
			(profile == catalogue.CheckSetAll || e.CheckSet() == profile) &&
			(labels == nil || labels(e.Labels())) &&
			(focus == nil || focus(e))
	}
}

// idList joins IDs for messages.
func idList(ids []string) string { return strings.Join(ids, ", ") }
