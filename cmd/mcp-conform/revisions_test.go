package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
)

// TestE2EServerCatchesFixturesDual: --protocol-version all checks a server
// at both revisions in one run and catches a defect of either one: a
// fixture that breaks a check only at 2026-07-28 (its ModernBreaks) and
// one that breaks a check of both revisions only at 2025-11-25 (its
// Breaks), while a reference that breaks nothing passes at both. Each
// check is named ID@revision, once per revision it runs at; every check
// but the broken ones passes.
func TestE2EServerCatchesFixturesDual(t *testing.T) {
	skipShort(t, "runs both revisions' checks against fixtures")
	t.Parallel()
	var some []servers.Fixture
	for _, name := range []string{"origin-unchecked-sessionless", "task-cancel-on-drop", "rejects-null-arguments"} {
		f, err := servers.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		some = append(some, f)
	}
	results := runFixtures(t, some, func(f servers.Fixture) []string {
		ids := slices.Concat(f.Breaks, f.ModernBreaks)
		for _, name := range dualNamed {
			id, _, _ := strings.Cut(name, "@")
			ids = append(ids, id)
		}
		return ids
	}, "--protocol-version", "all", "--suggest-profile", "")
	for _, f := range some {
		t.Run(f.Name, func(t *testing.T) {
			r := <-results[f.Name]
			var wrong []string
			if r.err != nil {
				wrong = append(wrong, r.err.Error())
			} else {
				wrong = dualVerdicts(f, r)
			}
			if len(wrong) > 0 {
				t.Errorf("fixture %s (%s), run took %v:\n  %s\nconsole:\n%s\nstderr:\n%s",
					f.Name, f.About, r.took.Round(time.Second), strings.Join(wrong, "\n  "), r.stdout, r.stderr)
			}
		})
	}
}

// dualNamed are checks every dual run must hold, named at a revision.
var dualNamed = []string{"ORIGIN-403@2025-11-25", "ORIGIN-403@2026-07-28", "SESS-UNKNOWN-404@2025-11-25", "MODERN-METHOD-404@2026-07-28"}

// dualVerdicts lists what is wrong with a dual run against f.
func dualVerdicts(f servers.Fixture, r fixtureRun) []string {
	var wrong []string
	if want := wantExit(append(slices.Clone(f.Breaks), f.ModernBreaks...)); r.code != want {
		wrong = append(wrong, fmt.Sprintf("exit %d, want %d", r.code, want))
	}
	if !slices.Equal(r.run.Revisions, []string{wire.DefaultProtocolVersion, wire.SessionlessProtocolVersion}) {
		wrong = append(wrong, fmt.Sprintf("revisions %v", r.run.Revisions))
	}
	seen := map[string]bool{}
	for _, c := range r.run.Checks {
		if leftOut(c) {
			continue
		}
		breaks := f.Breaks
		switch c.Revision {
		case wire.SessionlessProtocolVersion:
			breaks = f.ModernBreaks
			if !serverchecks.RunsInSessionlessRevision(c.ID) {
				wrong = append(wrong, c.Name()+" is listed, but does not run in the sessionless revision")
			}
		case wire.DefaultProtocolVersion:
		default:
			wrong = append(wrong, fmt.Sprintf("%s has revision %q", c.ID, c.Revision))
		}
		if seen[c.Name()] {
			wrong = append(wrong, c.Name()+" is listed twice")
		}
		seen[c.Name()] = true
		broken := slices.Contains(breaks, c.ID)
		switch {
		case broken && (c.Verdict == report.Pass || c.Verdict == report.Skip):
			wrong = append(wrong, fmt.Sprintf("%s is %s: the check does not catch it", c.Name(), c.Verdict))
		case !broken && c.Verdict != report.Pass && !skipsByDesign(c):
			wrong = append(wrong, fmt.Sprintf("%s is %s, but the fixture does not break it there: %s", c.Name(), c.Verdict, c.Message))
		}
	}
	for _, name := range dualNamed {
		if !seen[name] {
			wrong = append(wrong, name+" is missing from the run")
		}
	}
	return wrong
}

// TestE2EDualRunBaseline: in a run of both revisions an --expected-failures
// entry ID@revision expects the failure at that revision alone, and a
// bare ID at both, so a pass at the other is stale and fails the run;
// --focus '^ID$' selects the check at both revisions.
func TestE2EDualRunBaseline(t *testing.T) {
	skipShort(t, "runs a fixture")
	t.Parallel()
	exe := buildCLI(t)
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		entry string
		code  int
		want  map[string]report.Verdict
	}{
		{"ORIGIN-403@2026-07-28", exitOK, map[string]report.Verdict{"ORIGIN-403@2025-11-25": report.Pass, "ORIGIN-403@2026-07-28": report.ExpectedFailure}},
		{"ORIGIN-403", exitFail, map[string]report.Verdict{"ORIGIN-403@2025-11-25": report.Stale, "ORIGIN-403@2026-07-28": report.ExpectedFailure}},
	} {
		baseline := filepath.Join(dir, "expected")
		if err := os.WriteFile(baseline, []byte(tt.entry+" # served whatever the Origin under 2026-07-28\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		js := filepath.Join(dir, "r.json")
		out, errOut, code := runSelf(t, suiteTimeout, "server",
			"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} origin-unchecked-sessionless", exe),
			"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", profile, "--json", js,
			"--protocol-version", "all", "--focus", "^ORIGIN-403$", "--expected-failures", baseline, "--suggest-profile", "")
		if code != tt.code {
			t.Fatalf("baseline %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.entry, code, tt.code, out, errOut)
		}
		got := map[string]report.Verdict{}
		for _, c := range readRun(t, js).Checks {
			if c.Cause != report.NotSelected {
				got[c.Name()] = c.Verdict
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("baseline %s: %v, want %v\n%s", tt.entry, got, tt.want, out)
		}
	}
}

// TestE2EInitDual: init --protocol-version all writes a baseline that names a
// failure at its revision (ORIGIN-403@2026-07-28, not the bare ID, which
// would be stale at 2025-11-25), and the run it suggests passes with it.
func TestE2EInitDual(t *testing.T) {
	skipShort(t, "end-to-end: runs checks against a fixture")
	t.Parallel()
	dir := t.TempDir()
	exe := buildCLI(t)
	fixture := "origin-unchecked-sessionless"
	out, errOut, code := runSelf(t, suiteTimeout, "init", "--dir", dir,
		"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, fixture),
		"--bearer-token", "alice-token", "--protocol-version", "all", "--focus", "^ORIGIN-403$")
	if code != exitOK {
		t.Fatalf("init: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, initExpected))
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			entries = append(entries, strings.Fields(line)[0])
		}
	}
	if !slices.Equal(entries, []string{"ORIGIN-403@2026-07-28"}) {
		t.Fatalf("baseline entries %q, want ORIGIN-403@2026-07-28:\n%s", entries, data)
	}
	r, _ := checkFixture(t, fixture, filepath.Join(dir, initProfile), exitOK, "--protocol-version", "all",
		"--expected-failures", filepath.Join(dir, initExpected), "--focus", "^ORIGIN-403$")
	for _, c := range r.Checks {
		if c.Name() == "ORIGIN-403@2026-07-28" && c.Verdict != report.ExpectedFailure || c.Name() == "ORIGIN-403@2025-11-25" && c.Verdict != report.Pass {
			t.Errorf("with init's baseline: %s %s", c.Name(), c.Verdict)
		}
	}
}
