package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
)

// checkID selects the check TestOneCheck proves (make check ID=...).
var checkID = flag.String("check", "", "the server check TestOneCheck proves: it passes on the reference and fails on each fixture that breaks it")

// TestOneCheck is a check author's fast loop: the one check -check names
// passes against the reference and does not pass against any fixture
// that breaks it (a fixture that only blocks it must block it), each run
// focused on that check alone. Without -check it is skipped.
func TestOneCheck(t *testing.T) {
	if *checkID == "" {
		t.Skip("no -check ID given (make check ID=GRACE-EXPIRES)")
	}
	e, ok := suites.Lookup(*checkID)
	if !ok || e.Side != catalogue.Server {
		t.Fatalf("-check %q is not a server check (mcp-conform list)", *checkID)
	}
	// A check of the sessionless revision only is proved at that revision,
	// on the fixtures that break it there.
	rev, breaks := wire.DefaultProtocolVersion, func(f servers.Fixture) []string { return f.Breaks }
	if e.Revisions.Since == wire.Revision20260728 {
		rev, breaks = wire.SessionlessProtocolVersion, func(f servers.Fixture) []string { return f.ModernBreaks }
	}
	var breakers []servers.Fixture
	for _, f := range servers.All() {
		if slices.Contains(breaks(f), e.ID) {
			breakers = append(breakers, f)
		}
	}
	if len(breakers) == 0 {
		t.Errorf("no fixture breaks %s: a check must be proved able to fail", e.ID)
	}
	t.Run("reference", func(t *testing.T) {
		t.Parallel()
		js := filepath.Join(t.TempDir(), "r.json")
		out, errOut, code := runSelf(t, suiteTimeout, "server", "--protocol-version", rev, "--focus", "^"+e.ID+"$", "--strict", "--json", js)
		if c := resultOf(readRun(t, js), e.ID); code != exitOK || c.Verdict != report.Pass {
			t.Errorf("%s on the reference: exit %d, %s %s\n%s\n%s", e.ID, code, c.Verdict, c.Message, out, errOut)
		}
	})
	// Against a fixture the check runs with the checks its premise rests
	// on, so that a fixture that only blocks it shows that.
	focus := focusPattern([]string{e.ID})
	for _, f := range breakers {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			// The test binary serves the fixture too (its children inherit
			// selfEnv), so nothing is built.
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			js := filepath.Join(t.TempDir(), "r.json")
			_, _, _ = runSelf(t, suiteTimeout, "server", "--protocol-version", rev, "--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, f.Name),
				"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", "../../fixtures/profile.yaml", "--json", js, "--strict", "--focus", focus)
			c := resultOf(readRun(t, js), e.ID)
			switch {
			case c.Verdict == report.Pass:
				t.Errorf("%s passed on %s (%s): the check does not catch it", e.ID, f.Name, f.About)
			case c.Verdict == report.Blocked && !suites.Blockable(e.ID, breaks(f)) && len(f.Premises) == 0:
				t.Errorf("%s on %s: blocked (%s), want a failure of its own: nothing its premise rests on is broken there", e.ID, f.Name, c.Message)
			default:
				t.Logf("%s on %s: %s: %s", e.ID, f.Name, c.Verdict, firstLineOf(c.Message))
			}
		})
	}
}

// firstLineOf is a message's first line.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// resultOf finds a check's result in a run.
func resultOf(r *report.Run, id string) report.Check {
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	return report.Check{ID: id, Verdict: report.Skip, Message: "not in the report"}
}
