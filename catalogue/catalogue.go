// Package catalogue is the vocabulary of the behaviour catalogue: what an
// entry says about a check (its ID, level, section, revisions, the
// target-profile keys it needs, where its behaviour is written down). Each
// check declares its own entry beside its body (suites/serverchecks,
// suites/clientchecks); package suites gathers them into the catalogue. IDs
// are the contract between the suites, the reports, the fixtures and the
// documentation.
package catalogue

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Level is how binding a behaviour is.
type Level string

// Levels: MUST/SHOULD/MAY come from the MCP specification; RES from the
// resilience design (required in the resilience profile).
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
	Res    Level = "RES"
)

// CheckSet is a group of checks selected with --checks: the
// specification's, the resilience profile's, or all. (The target profile,
// package target, describes the server under test: another thing.)
type CheckSet string

// Check sets.
const (
	CheckSetSpec       CheckSet = "spec"
	CheckSetResilience CheckSet = "resilience"
	CheckSetAll        CheckSet = "all"
)

// Side says which end of the connection a behaviour belongs to.
type Side string

// Sides.
const (
	Server Side = "server"
	Client Side = "client"
)

// Key is a target-profile key a check can need (see package target).
type Key string

// Entry is one behaviour.
type Entry struct {
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Levels are the entry's level at a revision whose sentence binds
	// otherwise (a SHOULD that 2026-07-28 made a MUST): the check is
	// graded at that level there (At).
	Levels  map[string]Level `json:"levels,omitempty"`
	Side    Side             `json:"side"`
	Section string           `json:"section"`
	Summary string           `json:"summary"`
	SpecRef string           `json:"spec_ref"`
	// Needs are the target-profile keys without which the check is skipped.
	Needs []Key `json:"needs,omitempty"`
	// Restarts: the check restarts the target, so it needs one the harness
	// started (the embedded reference or --server-cmd).
	Restarts bool `json:"restarts,omitempty"`
	// Replicas: the check needs a second replica of the target
	// (--replica-url).
	Replicas bool `json:"replicas,omitempty"`
	// Exclusive: the check may disturb the whole target (a restart, or
	// writes stalled by a client that stops reading), so it runs alone,
	// after the checks that run side by side.
	Exclusive bool `json:"exclusive,omitempty"`
	// Revisions are the protocol revisions the behaviour belongs to; a
	// run of another skips the check.
	Revisions Revisions `json:"revisions"`
	// Stateless: at a revision with sessions, the check also runs against
	// a target that issues no session id; the others are skipped there.
	Stateless bool `json:"stateless,omitempty"`
	// Idle: the check leaves its session silent on purpose (the grace
	// checks). Other checks keep their sessions warm, so a session reaped
	// mid-check is never blamed on the behaviour they look at.
	Idle bool `json:"idle,omitempty"`
	// ResumeRequired: a target that refuses to resume a stream fails the
	// check; for the others a refusal means the behaviour cannot be
	// observed, and the check is skipped.
	ResumeRequired bool `json:"resume_required,omitempty"`
	// DependsOn are the checks whose behaviour this check's premise rests
	// on (ENVELOPE-RESUME-HINT reads the envelope ENVELOPE-404 checks):
	// when one of them fails and this one does not pass, this one is
	// reported as blocked by it, not as a defect of its own.
	DependsOn []string `json:"depends_on,omitempty"`
}

// At is the entry as graded at revision: its level there.
func (e Entry) At(revision string) Entry {
	if l, ok := e.Levels[revision]; ok {
		e.Level = l
	}
	return e
}

// LevelText is the entry's level for listings, with the revisions where
// it differs: "SHOULD (MUST at 2026-07-28)".
func (e Entry) LevelText() string {
	s := string(e.Level)
	for _, rev := range slices.Sorted(maps.Keys(e.Levels)) {
		s += fmt.Sprintf(" (%s at %s)", e.Levels[rev], rev)
	}
	return s
}

// NeedsText says what the check needs, for listings: the profile keys and
// a restartable target.
func (e Entry) NeedsText() string {
	var parts []string
	for _, k := range e.Needs {
		parts = append(parts, string(k))
	}
	if e.Restarts {
		parts = append(parts, "--server-cmd")
	}
	if e.Replicas {
		parts = append(parts, "--replica-url")
	}
	return strings.Join(parts, ", ")
}

// Missing says which of the entry's prerequisites a run lacks: the
// profile keys has does not have, and the flags (--server-cmd,
// --replica-url) whose target the run was not given.
func (e Entry) Missing(has func(Key) bool, restartable, replicated bool) (keys []Key, flags []string) {
	for _, k := range e.Needs {
		if !has(k) {
			keys = append(keys, k)
		}
	}
	if e.Restarts && !restartable {
		flags = append(flags, "--server-cmd")
	}
	if e.Replicas && !replicated {
		flags = append(flags, "--replica-url")
	}
	return keys, flags
}

// Matches reports whether a --focus pattern selects the entry: it is
// matched against the bare ID and against "ID: summary", so both '^ID$'
// and a word of the summary select it.
func (e Entry) Matches(focus *regexp.Regexp) bool {
	return focus.MatchString(e.ID) || focus.MatchString(e.ID+": "+e.Summary)
}

// CheckSet returns the check set the entry belongs to.
func (e Entry) CheckSet() CheckSet {
	if e.Level == Res {
		return CheckSetResilience
	}
	return CheckSetSpec
}

// Labels are the labels of the entry's check: side, section, check set
// and level, all lower case, so --label-filter can select on any of them.
func (e Entry) Labels() []string {
	return []string{string(e.Side), e.Section, string(e.CheckSet()), strings.ToLower(string(e.Level))}
}

// Required reports whether a failed check of this entry fails the run.
func (e Entry) Required(strict bool) bool {
	switch e.Level {
	case Must, Res:
		return true
	case Should:
		return strict
	}
	return false
}

// Find returns the entry of entries with the given ID.
func Find(entries []Entry, id string) (Entry, bool) {
	for _, e := range entries {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}
