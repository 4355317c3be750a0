package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestInitUsage: init needs a server, a directory, and never overwrites a
// file without --force; it says so before it starts anything.
func TestInitUsage(t *testing.T) {
	dir := t.TempDir()
	taken := t.TempDir()
	if err := os.WriteFile(filepath.Join(taken, initExpected), []byte("X\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"init", "--dir", dir}, "want --url URL, or --server-cmd CMD"},
		{[]string{"init", "--url", "http://127.0.0.1:1/mcp", "--dir", filepath.Join(dir, "nope")}, "is not a directory"},
		{[]string{"init", "--url", "http://127.0.0.1:1/mcp", "--dir", dir, "--action", "mcp-conform"}, "--action must look like OWNER/REPO@REF"},
		{[]string{"init", "--url", "http://127.0.0.1:1/mcp", "--dir", taken}, filepath.Join(taken, initExpected) + " exists: nothing written (--force overwrites)"},
		{[]string{"init", "--url", "http://127.0.0.1:1/mcp", "--dir", taken, "--force"}, "cannot reach"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// Nothing was left behind, and the file that was there is untouched.
	for _, d := range []string{dir, taken} {
		entries, _ := os.ReadDir(d)
		if len(entries) > 1 || (d == dir && len(entries) > 0) {
			t.Errorf("%s holds %v after failed inits", d, entries)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(taken, initExpected)); string(data) != "X\n" {
		t.Errorf("a refused init changed %s: %q", initExpected, data)
	}
}

// initFocus keeps the init runs short: checks that need no profile key.
const initFocus = "^(SESS-UNKNOWN-404|SESS-ID-CHARS|ENVELOPE-404)$"

// initAgainst runs init in a new directory against fixture name, as a
// server author would with their server's command, and returns the
// directory.
func initAgainst(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	exe := buildCLI(t)
	out, errOut, code := runSelf(t, suiteTimeout, "init", "--dir", dir,
		"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, name),
		"--bearer-token", "alice-token", "--focus", initFocus)
	if code != exitOK {
		t.Fatalf("init against %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, out, errOut)
	}
	checkWorkflow(t, dir)
	return dir
}

// serverWith runs the checks against fixture name with the files init
// wrote in dir, expecting exit code want.
func serverWith(t *testing.T, dir, name string, want int) *report.Run {
	t.Helper()
	r, _ := checkFixture(t, name, filepath.Join(dir, initProfile), want,
		"--expected-failures", filepath.Join(dir, initExpected), "--focus", initFocus)
	return r
}

// TestE2EInitThenServer: on a server with no defect among the checks run,
// init writes an empty baseline, the server command it suggests then
// passes, and a regression (one behaviour broken) fails it. On a server
// with a defect, the baseline lists the check with why, and the run passes
// with it as an expected failure.
func TestE2EInitThenServer(t *testing.T) {
	skipShort(t, "end-to-end: runs checks against fixtures")
	// session-id-sequential breaks only SESS-ID-ENTROPY, which is not run.
	dir := initAgainst(t, "session-id-sequential")
	data, err := os.ReadFile(filepath.Join(dir, initExpected))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "# None: every required check passed.") {
		t.Errorf("baseline of a server with no defect:\n%s", data)
	}
	serverWith(t, dir, "session-id-sequential", exitOK)
	r := serverWith(t, dir, "unknown-id-400", exitFail)
	if c := resultOf(r, "SESS-UNKNOWN-404"); c.Verdict != report.Fail {
		t.Errorf("the regression: SESS-UNKNOWN-404 %s, want fail", c.Verdict)
	}

	dir = initAgainst(t, "unknown-id-400")
	data, err = os.ReadFile(filepath.Join(dir, initExpected))
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			entries = append(entries, line)
		}
	}
	// The fixtures speak both revisions, so init's run checked both and
	// names the failure at its revision.
	if len(entries) != 1 || !strings.HasPrefix(entries[0], "SESS-UNKNOWN-404@"+wire.DefaultProtocolVersion+" ") || !strings.Contains(entries[0], "# MUST: GET with unknown session id") {
		t.Errorf("baseline entries %q, want SESS-UNKNOWN-404 with its level and message", entries)
	}
	r = serverWith(t, dir, "unknown-id-400", exitOK)
	if c := resultOf(r, "SESS-UNKNOWN-404"); c.Verdict != report.ExpectedFailure {
		t.Errorf("with init's baseline: SESS-UNKNOWN-404 %s, want expected-failure", c.Verdict)
	}
	profile, err := os.ReadFile(filepath.Join(dir, initProfile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tools the server advertises: ", "long_operation", `Authorization: "Bearer alice-token"`, "http://127.0.0.1:{port}/mcp"} {
		if !strings.Contains(string(profile), want) {
			t.Errorf("profile lacks %q:\n%s", want, profile)
		}
	}
}

// checkWorkflow: the workflow init wrote uses the action with inputs
// action.yml declares, naming the files init wrote beside it.
func checkWorkflow(t *testing.T, dir string) {
	t.Helper()
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `json:"uses"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	data, err := os.ReadFile(filepath.Join(dir, initWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("workflow: %v\n%s", err, data)
	}
	var action struct {
		Inputs map[string]any `json:"inputs"`
	}
	ad, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(ad, &action); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range wf.Jobs["mcp-conform"].Steps {
		if s.Uses != defaultAction() {
			continue
		}
		found = true
		for k := range s.With {
			if _, ok := action.Inputs[k]; !ok {
				t.Errorf("the workflow gives the action %s, which action.yml does not declare", k)
			}
		}
		for _, k := range []string{"target-profile", "expected-failures"} {
			if _, err := os.Stat(filepath.Join(dir, s.With[k])); err != nil {
				t.Errorf("the workflow's %s: %v", k, err)
			}
		}
		if s.With["url"] != "http://127.0.0.1:{port}/mcp" || !strings.Contains(s.With["server-command"], "{port}") || s.With["args"] != "--focus '"+initFocus+"'" {
			t.Errorf("the workflow's inputs: %v", s.With)
		}
	}
	if !found {
		t.Errorf("no step uses %s:\n%s", defaultAction(), data)
	}
}

// TestBaselineListsBlocked: init's baseline lists the checks a failure
// blocked, each naming its root, so that the next run (where the root is
// an expected failure and no longer blocks a more severe failure) exits 0.
func TestBaselineListsBlocked(t *testing.T) {
	run := &report.Run{ProtocolVersion: "2025-11-25", Checks: []report.Check{
		{ID: "ENVELOPE-RESUME-HINT", Level: "RES", Verdict: report.Blocked, BlockedBy: []string{"ENVELOPE-404"}, Message: "blocked by ENVELOPE-404 (fail: Content-Type of the 404): ..."},
		{ID: "SESS-ID-CHARS", Level: "MUST", Verdict: report.Pass},
		{ID: "ENVELOPE-404", Level: "RES", Verdict: report.Fail, Message: "Content-Type of the 404\nExpected ..."},
		{ID: "GET-PRIMED", Level: "RES", Verdict: report.Inconclusive, Message: "could not observe"},
	}}
	got := baseline(run, harness.Options{URL: "http://x/mcp", Checks: "all"}, time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	var entries []string
	for _, line := range strings.Split(got, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			entries = append(entries, strings.Join(strings.Fields(line), " "))
		}
	}
	want := []string{"ENVELOPE-404 # RES: Content-Type of the 404", "ENVELOPE-RESUME-HINT # RES: blocked by ENVELOPE-404"}
	if !slices.Equal(entries, want) {
		t.Errorf("baseline entries:\n%q\nwant\n%q", entries, want)
	}
}
