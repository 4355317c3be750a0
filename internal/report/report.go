// Package report is the result model of a conformance run and its four
// renderings: a console summary, JUnit XML, a stable JSON document and a
// self-contained HTML page with a timeline per check.
package report

import (
	"fmt"
	"slices"
	"time"
)

// SchemaVersion is the version of the JSON document; it changes only when
// a field is removed or changes meaning.
const SchemaVersion = 2

// Verdict is a check's outcome after its level is taken into account.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass"
	// Fail is a failed required check (MUST or RES; SHOULD with --strict):
	// the run fails.
	Fail Verdict = "fail"
	// Warn is a failed SHOULD without --strict.
	Warn Verdict = "warn"
	// Info is a failed MAY: informational only.
	Info Verdict = "info"
	// Skip is a check that did not apply or was not selected; Message says why.
	Skip Verdict = "skip"
	// ExpectedFailure is a failure listed in --expected-failures.
	ExpectedFailure Verdict = "expected-failure"
	// Stale is a check listed in --expected-failures that passed: the
	// baseline is out of date, and the run fails until it is updated.
	Stale Verdict = "stale"
	// Inconclusive is a check that could not observe its behaviour, twice
	// (it is retried once): its own setup timed out, its own delays broke
	// the premise, or the target's legitimate choice put the observation
	// beyond its budget. Never the target's failure; Message says what
	// could not be observed and why.
	Inconclusive Verdict = "inconclusive"
	// Blocked is a check that did not pass while a check its premise
	// depends on failed: BlockedBy names that root cause, which is the
	// defect to fix; the blocked check is not counted as one of its own.
	Blocked Verdict = "blocked"
)

// Verdicts lists every verdict in display order.
var Verdicts = []Verdict{Pass, Fail, Warn, Info, Blocked, Inconclusive, Skip, ExpectedFailure, Stale}

// Defect reports whether a check with this verdict is a finding about the
// target of its own: a failure at any level, expected or not, that no
// other failure explains.
func (v Verdict) Defect() bool {
	return v == Fail || v == Warn || v == Info || v == ExpectedFailure
}

// FailsRun reports whether a check with this verdict fails the run.
func (v Verdict) FailsRun() bool { return v == Fail || v == Stale }

// Check is the result of one check.
type Check struct {
	ID       string `json:"id"`
	Level    string `json:"level"`
	Section  string `json:"section"`
	CheckSet string `json:"check_set"`
	// Profile is CheckSet under its schema-1 name, kept for readers of
	// that schema (fields are never changed, only added).
	Profile string  `json:"profile"`
	Summary string  `json:"summary"`
	SpecRef string  `json:"spec_ref"`
	Verdict Verdict `json:"verdict"`
	Message string  `json:"message,omitempty"`
	// Cause is why a skipped or inconclusive check did not judge the
	// behaviour (see Cause); empty for the other verdicts.
	Cause    Cause  `json:"cause,omitempty"`
	Location string `json:"location,omitempty"`
	// Exchange is the wire log of a failed check: requests, statuses,
	// headers, SSE lines with ids, faults, with times from the check's start.
	Exchange string  `json:"exchange,omitempty"`
	Seconds  float64 `json:"duration_seconds"`
	// Revision is the protocol revision the check ran at, in a run of more
	// than one (Run.Revisions); a run of one has it in Run.ProtocolVersion.
	Revision string `json:"revision,omitempty"`
	// Premise is what the check's failed step stood on (catalogue.Premise):
	// a check whose premise's root failed too is blocked by it.
	Premise string `json:"premise,omitempty"`
	// BlockedBy names the failed checks whose failure blocked this one
	// (verdict blocked), as Name does: always of the check's own revision.
	BlockedBy []string `json:"blocked_by,omitempty"`
	// Retried is why the check's first attempt was inconclusive, when the
	// verdict is the second attempt's.
	Retried string `json:"retried,omitempty"`
	// Timeline is the structured exchange log of every check that ran.
	Timeline []Event `json:"timeline,omitempty"`
	// Fixes are the recipes for a failed check on the SDKs that have one
	// (docs/recipes): which the target is built on cannot be told from
	// what it sends, so each is listed.
	Fixes []Fix `json:"fixes,omitempty"`
}

// FixesNote says why a failure names the fix for more than one SDK.
const FixesNote = "Fixes are named for every SDK that has a recipe for the check: which SDK a target is built on " +
	"cannot be told from what it sends (serverInfo names the server, not its SDK). docs/recipes/README.md"

// Fix is a recipe for a failed check on one SDK: the section of
// docs/recipes that says what to change.
type Fix struct {
	SDK string `json:"sdk"`
	Ref string `json:"ref"`
}

// Run is the result of one conformance run.
type Run struct {
	SchemaVersion   int             `json:"schema_version"`
	Tool            string          `json:"tool"`
	Mode            string          `json:"mode"`
	Target          string          `json:"target"`
	CheckSet        string          `json:"check_set"`
	Profile         string          `json:"profile"` // CheckSet's schema-1 name, as Check.Profile
	ProtocolVersion string          `json:"protocol_version"`
	Strict          bool            `json:"strict"`
	Started         time.Time       `json:"started"`
	Seconds         float64         `json:"duration_seconds"`
	Passed          bool            `json:"passed"`
	Counts          map[Verdict]int `json:"counts"`
	// Defects is how many distinct findings the run has: the checks that
	// failed at any level and were not blocked by another failure.
	Defects int `json:"defects"`
	// RootCauses are those checks' names (Check.Name), root causes first: failures of the
	// run, then warnings, informational and expected failures.
	RootCauses []string `json:"root_causes"`
	Checks     []Check  `json:"checks"`
	// Revisions are the protocol revisions of a run of more than one
	// (--protocol-version all); ProtocolVersion then lists them too.
	Revisions []string `json:"revisions,omitempty"`
}

// Name is how the reports name a check: its ID, or ID@revision in a run
// of more than one revision, where a check may run at each.
func (c Check) Name() string {
	if c.Revision == "" {
		return c.ID
	}
	return c.ID + "@" + c.Revision
}

// Finish computes Counts and Passed from the checks.
func (r *Run) Finish() {
	r.SchemaVersion = SchemaVersion
	r.Profile = r.CheckSet
	for i := range r.Checks {
		r.Checks[i].Profile = r.Checks[i].CheckSet
	}
	r.Counts = map[Verdict]int{}
	for _, v := range Verdicts {
		r.Counts[v] = 0
	}
	r.Passed = true
	r.Defects = 0
	for _, c := range r.Checks {
		r.Counts[c.Verdict]++
		if c.Verdict.FailsRun() {
			r.Passed = false
		}
		if c.Verdict.Defect() {
			r.Defects++
		}
	}
	r.RootCauses = []string{}
	for _, c := range RootsFirst(r.Checks) {
		if c.Verdict.Defect() {
			r.RootCauses = append(r.RootCauses, c.Name())
		}
	}
}

// Graded reports whether any check judged the target (a verdict other
// than skip or inconclusive): a run that graded nothing did not pass.
func (r *Run) Graded() bool {
	for _, c := range r.Checks {
		if c.Verdict != Skip && c.Verdict != Inconclusive {
			return true
		}
	}
	return false
}

// Result is the word the summaries give the run: PASSED, FAILED, or
// NOTHING GRADED when every check skipped or was inconclusive.
func (r *Run) Result() string {
	switch {
	case !r.Passed:
		return "FAILED"
	case !r.Graded():
		return "NOTHING GRADED"
	}
	return "PASSED"
}

// NothingGradedWhy says why a run graded nothing: the skip reason most
// checks gave, with how many gave it.
func (r *Run) NothingGradedWhy() string {
	count := map[string]int{}
	best := ""
	for _, c := range r.Checks {
		if c.Verdict != Skip || c.Cause == NotSelected {
			continue
		}
		why := firstLine(c.Message)
		count[why]++
		if count[why] > count[best] || (count[why] == count[best] && why < best) {
			best = why
		}
	}
	if best == "" {
		return "no check ran"
	}
	return fmt.Sprintf("%d of the checks skipped: %s", count[best], best)
}

// rank orders checks for the reports: root causes first (failures of the
// run, then warnings and informational failures), then the checks they
// blocked, the inconclusive ones, and the rest.
func rank(v Verdict) int {
	switch v {
	case Fail, Stale:
		return 0
	case Warn:
		return 1
	case Info:
		return 2
	case Blocked:
		return 3
	case Inconclusive:
		return 4
	case ExpectedFailure:
		return 5
	}
	return 6
}

// RootsFirst returns the checks ordered by rank, catalogue order within a
// rank.
func RootsFirst(cs []Check) []Check {
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b Check) int { return rank(a.Verdict) - rank(b.Verdict) })
	return out
}
