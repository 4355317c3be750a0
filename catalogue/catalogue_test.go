package catalogue

import (
	"regexp"
	"testing"
)

func TestEntries(t *testing.T) {
	id := regexp.MustCompile(`^[A-Z0-9]+(-[A-Z0-9]+)+$`)
	for _, e := range All() {
		if !id.MatchString(e.ID) || e.Summary == "" || e.Section == "" || e.SpecRef == "" {
			t.Errorf("incomplete entry %+v", e)
		}
		switch e.Level {
		case Must, Should, May, Res:
		default:
			t.Errorf("%s: level %q", e.ID, e.Level)
		}
		if (e.Side == Client) != (e.Section == "client") {
			t.Errorf("%s: side %s, section %s", e.ID, e.Side, e.Section)
		}
	}
	if len(Of(Server)) == 0 || len(Of(Client)) == 0 {
		t.Error("a side has no entries")
	}
	for _, e := range All() {
		if e.Exclusive && e.Side != Server {
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

func TestMissing(t *testing.T) {
	e := Entry{Needs: []Key{KeyNotifying, KeyPrincipals}, Restarts: true, Replicas: true}
	has := func(k Key) bool { return k == KeyPrincipals }
	keys, flags := e.Missing(has, false, false)
	if len(keys) != 1 || keys[0] != KeyNotifying || len(flags) != 2 || flags[0] != "--server-cmd" || flags[1] != "--replica-url" {
		t.Errorf("missing %v %v, want [tools.notifying] [--server-cmd --replica-url]", keys, flags)
	}
	if keys, flags := e.Missing(func(Key) bool { return true }, true, true); len(keys)+len(flags) != 0 {
		t.Errorf("nothing missing, got %v %v", keys, flags)
	}
	if got := e.NeedsText(); got != "tools.notifying, principals, --server-cmd, --replica-url" {
		t.Errorf("NeedsText %q", got)
	}
}

func TestRequired(t *testing.T) {
	for _, tc := range []struct {
		l           Level
		lax, strict bool
		wantSet     CheckSet
	}{
		{Must, true, true, CheckSetSpec},
		{Should, false, true, CheckSetSpec},
		{May, false, false, CheckSetSpec},
		{Res, true, true, CheckSetResilience},
	} {
		e := Entry{Level: tc.l}
		if e.Required(false) != tc.lax || e.Required(true) != tc.strict || e.CheckSet() != tc.wantSet {
			t.Errorf("%s: required %v/%v check set %s", tc.l, e.Required(false), e.Required(true), e.CheckSet())
		}
	}
	if _, ok := Lookup("NOPE"); ok {
		t.Error("Lookup of an unknown ID succeeded")
	}
}

// TestMatches: a --focus pattern anchored on the bare ID selects exactly
// that entry; a word of the summary still selects it.
func TestMatches(t *testing.T) {
	e := MustLookup("GRACE-EXPIRES")
	for pattern, want := range map[string]bool{
		`^GRACE-EXPIRES$`: true,
		`^GRACE-`:         true,
		`silent for`:      true,
		`^GRACE-EXPIRE$`:  false,
		`^SESS-`:          false,
	} {
		if got := e.Matches(regexp.MustCompile(pattern)); got != want {
			t.Errorf("%q matches %s: %v, want %v", pattern, e.ID, got, want)
		}
	}
	n := 0
	for _, o := range All() {
		if o.Matches(regexp.MustCompile(`^GRACE-EXPIRES$`)) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("'^GRACE-EXPIRES$' selects %d entries, want 1", n)
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
