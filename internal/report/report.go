// Package report is the result model of a conformance run and its four
// renderings: a console summary, JUnit XML, a stable JSON document and a
// self-contained HTML page with a timeline per check.
package report

import (
	"time"
)

// SchemaVersion is the version of the JSON document; it changes only when
// a field is removed or changes meaning.
const SchemaVersion = 1

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
)

// Verdicts lists every verdict in display order.
var Verdicts = []Verdict{Pass, Fail, Warn, Info, Skip, ExpectedFailure, Stale}

// FailsRun reports whether a check with this verdict fails the run.
func (v Verdict) FailsRun() bool { return v == Fail || v == Stale }

// Check is the result of one check.
type Check struct {
	ID       string  `json:"id"`
	Level    string  `json:"level"`
	Section  string  `json:"section"`
	Profile  string  `json:"profile"`
	Summary  string  `json:"summary"`
	SpecRef  string  `json:"spec_ref"`
	Verdict  Verdict `json:"verdict"`
	Message  string  `json:"message,omitempty"`
	Location string  `json:"location,omitempty"`
	// Exchange is the wire log of a failed check: requests, statuses,
	// headers, SSE lines with ids, faults, with times from the check's start.
	Exchange string  `json:"exchange,omitempty"`
	Seconds  float64 `json:"duration_seconds"`
	// Timeline is the structured exchange log of every check that ran.
	Timeline []Event `json:"timeline,omitempty"`
}

// Run is the result of one conformance run.
type Run struct {
	SchemaVersion   int             `json:"schema_version"`
	Tool            string          `json:"tool"`
	Mode            string          `json:"mode"`
	Target          string          `json:"target"`
	Profile         string          `json:"profile"`
	ProtocolVersion string          `json:"protocol_version"`
	Strict          bool            `json:"strict"`
	Started         time.Time       `json:"started"`
	Seconds         float64         `json:"duration_seconds"`
	Passed          bool            `json:"passed"`
	Counts          map[Verdict]int `json:"counts"`
	Checks          []Check         `json:"checks"`
}

// Finish computes Counts and Passed from the checks.
func (r *Run) Finish() {
	r.SchemaVersion = SchemaVersion
	r.Counts = map[Verdict]int{}
	for _, v := range Verdicts {
		r.Counts[v] = 0
	}
	r.Passed = true
	for _, c := range r.Checks {
		r.Counts[c.Verdict]++
		if c.Verdict.FailsRun() {
			r.Passed = false
		}
	}
}
