package suites

import (
	"regexp"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

// TestEntries: every entry is complete and consistent.
func TestEntries(t *testing.T) {
	id := regexp.MustCompile(`^[A-Z0-9]+(-[A-Z0-9]+)+$`)
	for _, e := range All() {
		if !id.MatchString(e.ID) || e.Summary == "" || e.Section == "" || e.SpecRef == "" {
			t.Errorf("incomplete entry %+v", e)
		}
		switch e.Level {
		case catalogue.Must, catalogue.Should, catalogue.May, catalogue.Res:
		default:
			t.Errorf("%s: level %q", e.ID, e.Level)
		}
		if (e.Side == catalogue.Client) != (e.Section == "client") {
			t.Errorf("%s: side %s, section %s", e.ID, e.Side, e.Section)
		}
	}
	if len(Of(catalogue.Server)) == 0 || len(Of(catalogue.Client)) == 0 {
		t.Error("a side has no entries")
	}
	for _, e := range All() {
		if e.Exclusive && e.Side != catalogue.Server {
			t.Errorf("%s: only server checks share a target, so only they can need to run alone", e.ID)
		}
		if e.Restarts && !e.Exclusive {
			t.Errorf("%s restarts the target but may run beside other checks", e.ID)
		}
		if e.Replicas != (e.Section == "replicas") {
			t.Errorf("%s: replicas %v in section %s", e.ID, e.Replicas, e.Section)
		}
	}
}

// TestLookup: a bare ID anchored for --focus selects one entry, and an
// unknown ID is not found.
func TestLookup(t *testing.T) {
	n := 0
	for _, o := range All() {
		if o.Matches(regexp.MustCompile(`^GRACE-EXPIRES$`)) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("'^GRACE-EXPIRES$' selects %d entries, want 1", n)
	}
	if _, ok := Lookup("NOPE"); ok {
		t.Error("Lookup of an unknown ID succeeded")
	}
}

// TestDependsOn: every dependency names a check of the same side, and
// following them never comes back to where it started.
func TestDependsOn(t *testing.T) {
	var visit func(id string, path []string)
	visit = func(id string, path []string) {
		for _, p := range path {
			if p == id {
				t.Fatalf("dependency cycle: %v -> %s", path, id)
			}
		}
		for _, dep := range MustLookup(id).DependsOn {
			visit(dep, append(path, id))
		}
	}
	for _, e := range All() {
		for _, dep := range e.DependsOn {
			d, ok := Lookup(dep)
			if !ok || d.Side != e.Side {
				t.Errorf("%s depends on %q, not a check of its side", e.ID, dep)
			}
		}
		visit(e.ID, nil)
	}
}
