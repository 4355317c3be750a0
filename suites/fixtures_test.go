package suites

import (
	"github.com/mcp-conform/mcp-conform/suites/clientchecks/brokenpages"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/clients"
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
			t.Errorf("fixture %s: needs About and a Configure or Wrap", f.Name)
		}
		for i, id := range f.Breaks {
			if e, ok := Lookup(id); !ok || e.Side != catalogue.Server {
				t.Errorf("fixture %s breaks %q, which is not a server check", f.Name, id)
			}
			if slices.Contains(f.Breaks[:i], id) {
				t.Errorf("fixture %s lists %s twice", f.Name, id)
			}
		}
		for _, p := range f.Premises {
			if !slices.Contains(f.Breaks, p.Root()) {
				t.Errorf("fixture %s lacks premise %s, so it must break its root %s", f.Name, p, p.Root())
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
		if ProvesFailure(f, id) || slices.Contains(f.ModernBreaks, id) {
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

// TestClientFixtures: every variant breaks or skips client checks only (a
// legitimate one breaks none), and every client check is broken by some
// variant.
func TestClientFixtures(t *testing.T) {
	broken := map[string]bool{}
	for _, f := range clients.All() {
		if f.About == "" {
			t.Errorf("%s: needs About", f.Name)
		}
		for _, id := range append(append([]string(nil), f.Breaks...), f.Skips...) {
			if e, ok := Lookup(id); !ok || e.Side != catalogue.Client {
				t.Errorf("%s breaks or skips %s, which is not a client check", f.Name, id)
			}
		}
		for _, id := range f.Breaks {
			broken[id] = true
		}
		if g, err := clients.Lookup(f.Name); err != nil || g.Name != f.Name {
			t.Errorf("Lookup(%q): %v", f.Name, err)
		}
	}
	// A browser check's fixtures are broken pages.
	for _, p := range brokenpages.All() {
		if p.About == "" {
			t.Errorf("%s: needs About", p.Name)
		}
		for _, id := range p.Breaks {
			if e, ok := Lookup(id); !ok || e.Side != catalogue.Client {
				t.Errorf("%s breaks %s, which is not a client check", p.Name, id)
			}
			broken[id] = true
		}
	}
	for _, id := range IDs(catalogue.Client) {
		if !broken[id] {
			t.Errorf("no variant breaks %s: the check is not shown able to fail", id)
		}
	}
	if _, err := clients.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "ignores-retry") {
		t.Errorf("Lookup of an unknown name: %v", err)
	}
}

// TestPremisesHaveRoots: every premise is graded by a check of the
// catalogue, and some fixture of its side lacks it, so that what stands on it is seen
// blocked, never failed.
func TestPremisesHaveRoots(t *testing.T) {
	for _, p := range catalogue.Premises() {
		e, ok := Lookup(p.Root())
		if !ok || p.Says() == "" {
			t.Errorf("premise %s: root %q is not a check, or it says nothing", p, p.Root())
			continue
		}
		lacks := slices.ContainsFunc(servers.All(), func(f servers.Fixture) bool { return slices.Contains(f.Premises, p) })
		if e.Side == catalogue.Client {
			lacks = slices.ContainsFunc(clients.All(), func(f clients.Fixture) bool { return slices.Contains(f.Premises, p) })
		}
		if !lacks {
			t.Errorf("premise %s: no %s fixture lacks it", p, e.Side)
		}
	}
}
