package suites

import (
	"regexp"
	"slices"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

// TestEveryServerIDHasFixture: the mutation score is 100%, every server
// check has a fixture that it must catch.
func TestEveryServerIDHasFixture(t *testing.T) {
	for _, id := range IDs(catalogue.Server) {
		if len(breakers(id)) == 0 {
			t.Errorf("no fixture breaks %s", id)
		}
	}
}

var kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestFixturesWellFormed: names are kebab-case, each says what it does
// and breaks only server checks, each listed once. Breaks may be empty: a
// strict but correct server that every check must pass against.
func TestFixturesWellFormed(t *testing.T) {
	for _, f := range servers.All() {
		if !kebab.MatchString(f.Name) {
			t.Errorf("fixture name %q is not kebab-case", f.Name)
		}
		if f.About == "" || (f.Configure == nil && f.Wrap == nil) {
			t.Errorf("fixture %s: needs About and a configure or wrap", f.Name)
		}
		for i, id := range f.Breaks {
			if e, ok := Lookup(id); !ok || e.Side != catalogue.Server {
				t.Errorf("fixture %s breaks %q, which is not a server check", f.Name, id)
			}
			if slices.Contains(f.Breaks[:i], id) {
				t.Errorf("fixture %s lists %s twice", f.Name, id)
			}
		}
		for _, id := range f.Blocked {
			deps := MustLookup(id).DependsOn
			if !slices.Contains(f.Breaks, id) || !slices.ContainsFunc(deps, func(d string) bool { return slices.Contains(f.Breaks, d) }) {
				t.Errorf("fixture %s: blocked %s must be in Breaks and depend on another of them (it depends on %v)", f.Name, id, deps)
			}
		}
	}
}

// breakers returns the names of the fixtures that break id.
func breakers(id string) []string {
	var out []string
	for _, f := range servers.All() {
		// A check only blocked by another is not proved to fail on its own;
		// ModernBreaks are proved under --protocol-version 2026-07-28.
		if (slices.Contains(f.Breaks, id) && !slices.Contains(f.Blocked, id)) || slices.Contains(f.ModernBreaks, id) {
			out = append(out, f.Name)
		}
	}
	return append(out, breaksReplica(id)...)
}

// breaksReplica lists the replica fixtures that break id.
func breaksReplica(id string) []string {
	var out []string
	for _, f := range servers.ReplicaFixtures() {
		if slices.Contains(f.Breaks, id) {
			out = append(out, f.Name)
		}
	}
	return out
}
