package suites

import (
	"slices"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

// What a broken fixture may block is derived from the checks' premises,
// never listed by hand: a check added with DependsOn needs no edit to
// the fixtures that break what it depends on.

// Premises returns the checks id's premise rests on (its DependsOn),
// transitively, nearest first.
func Premises(id string) []string {
	var out []string
	var walk func(string)
	walk = func(id string) {
		for _, d := range MustLookup(id).DependsOn {
			if !slices.Contains(out, d) {
				out = append(out, d)
				walk(d)
			}
		}
	}
	walk(id)
	return out
}

// WithPremises returns ids and the checks their premises rest on.
func WithPremises(ids []string) []string {
	var all []string
	for _, id := range ids {
		for _, c := range append([]string{id}, Premises(id)...) {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	return all
}

// Dependents returns the checks whose premise rests on one of ids
// (transitively), in catalogue order, ids themselves left out.
func Dependents(ids []string) []string {
	var out []string
	for _, e := range all {
		if slices.Contains(ids, e.ID) {
			continue
		}
		if slices.ContainsFunc(Premises(e.ID), func(p string) bool { return slices.Contains(ids, p) }) {
			out = append(out, e.ID)
		}
	}
	return out
}

// Blockable reports whether check id may come out blocked against a
// fixture that breaks breaks, in a --strict run: a check its premise rests
// on is among them, and its failure is at least as severe (a failed MAY
// blocks no SHOULD, as the harness's engine has it). (Against a fixture
// that lacks a catalogue.Premise, any check whose failed step stood on it
// may be blocked too: that is decided by the step, in the run.)
func Blockable(id string, breaks []string) bool {
	level := strictSeverity(MustLookup(id))
	return slices.ContainsFunc(Premises(id), func(p string) bool {
		return slices.Contains(breaks, p) && strictSeverity(MustLookup(p)) >= level
	})
}

// strictSeverity orders what a failure of e is in a --strict run: a
// failure, or (a MAY) a note.
func strictSeverity(e catalogue.Entry) int {
	if e.Required(true) {
		return 2
	}
	return 1
}

// ProvesFailure reports whether fixture f proves that check id can fail
// on its own: f breaks id, and nothing id may be blocked by (a fixture
// that lacks a premise proves only the premise's root).
func ProvesFailure(f servers.Fixture, id string) bool {
	if !slices.Contains(f.Breaks, id) || Blockable(id, f.Breaks) {
		return false
	}
	return len(f.Premises) == 0 || slices.ContainsFunc(f.Premises, func(p catalogue.Premise) bool { return p.Root() == id })
}
