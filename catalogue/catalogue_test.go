package catalogue

import (
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"regexp"
	"testing"
)

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
}

// TestMatches: a --focus pattern anchored on the bare ID selects exactly
// that entry; a word of the summary still selects it.
func TestMatches(t *testing.T) {
	e := Entry{ID: "GRACE-EXPIRES", Summary: "A session silent for idle threshold + grace period (+ one reaper interval) is gone: 404."}
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
}

func TestFind(t *testing.T) {
	list := []Entry{{ID: "A-ONE"}, {ID: "B-TWO"}}
	if e, ok := Find(list, "B-TWO"); !ok || e.ID != "B-TWO" {
		t.Errorf("Find B-TWO: %v %v", e, ok)
	}
	if _, ok := Find(list, "C-THREE"); ok {
		t.Error("Find of an absent ID succeeded")
	}
}

// TestLevelAtRevision: an entry whose sentence binds otherwise at one
// revision is graded at that level there, and says so in listings.
func TestLevelAtRevision(t *testing.T) {
	e := Entry{ID: "X", Level: Should, Levels: map[string]Level{"2026-07-28": Must}}
	if got := e.At("2026-07-28"); got.Level != Must || !got.Required(false) {
		t.Errorf("at 2026-07-28: %s, required %v; want MUST, required", got.Level, got.Required(false))
	}
	if got := e.At("2025-11-25"); got.Level != Should || got.Required(false) {
		t.Errorf("at 2025-11-25: %s; want SHOULD", got.Level)
	}
	if got, want := e.LevelText(), "SHOULD (MUST at 2026-07-28)"; got != want {
		t.Errorf("LevelText %q, want %q", got, want)
	}
}

// TestNoRangeBeforeStreamableHTTP: no range of revisions holds 2024-11-05,
// whose HTTP+SSE transport has none of the checks' rules.
func TestNoRangeBeforeStreamableHTTP(t *testing.T) {
	for _, rs := range []Revisions{EveryRevision, WithSessions, WithVersionHeader, WithPriming, SessionlessOnly} {
		if rs.Has("2024-11-05") {
			t.Errorf("%s holds 2024-11-05", rs)
		}
	}
	if !WithSessions.Has(wire.Revision20250326) || !EveryRevision.Has(wire.Revision20260728) {
		t.Error("the ranges lost a revision the harness grades")
	}
}
