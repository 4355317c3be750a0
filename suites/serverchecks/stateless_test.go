package serverchecks

import (
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestApplicability: a check runs at a revision its entry lists, and
// against a stateless target of a revision with sessions only when its
// entry says Stateless; otherwise it is skipped with the cause that says
// which.
func TestApplicability(t *testing.T) {
	targets := []struct {
		name string
		tc   *Target
		runs func(catalogue.Entry) bool
		not  report.Cause
	}{
		{"2025-11-25 with sessions", &Target{ProtocolVersion: wire.DefaultProtocolVersion},
			func(e catalogue.Entry) bool { return e.Revisions.Has(wire.Revision20251125) }, report.OtherRevision},
		{"2025-11-25 stateless", &Target{ProtocolVersion: wire.DefaultProtocolVersion, Sessionless: "the target issued no session id"},
			func(e catalogue.Entry) bool { return e.Revisions.Has(wire.Revision20251125) && e.Stateless }, ""},
		{"2026-07-28", &Target{ProtocolVersion: wire.SessionlessProtocolVersion, Sessionless: "the target speaks 2026-07-28"},
			func(e catalogue.Entry) bool { return e.Revisions.Has(wire.Revision20260728) }, report.NoSessions},
	}
	for _, tt := range targets {
		ran := 0
		for _, e := range Entries() {
			cause, why := tt.tc.inapplicable(e)
			switch {
			case tt.runs(e) && cause != "":
				t.Errorf("%s: %s skipped (%s: %s), but it applies", tt.name, e.ID, cause, why)
			case !tt.runs(e) && (cause == "" || why == ""):
				t.Errorf("%s: %s runs, but it does not apply", tt.name, e.ID)
			case !tt.runs(e) && tt.not != "" && cause != tt.not:
				t.Errorf("%s: %s skipped as %s, want %s", tt.name, e.ID, cause, tt.not)
			case tt.runs(e):
				ran++
			}
		}
		if ran == 0 {
			t.Errorf("%s: no check applies", tt.name)
		}
	}
}
