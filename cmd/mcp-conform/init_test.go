package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
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
	for _, want := range []string{"Tools the server advertises (", `"long_operation"`, `Authorization: "Bearer alice-token"`, `"http://127.0.0.1:{port}/mcp"`} {
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

// hostileFocus keeps init's first run against a toolsMCP short: a check
// that runs, and one that skips for want of tools.notifying, so that the
// run rewrites the profile with what that key would enable.
const hostileFocus = "^(SESS-ID-CHARS|MSG-ONE-STREAM)$"

// initTools runs init in process against the endpoint at url.
func initTools(url, dir string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	args = append([]string{"init", "--url", url, "--dir", dir, "--protocol-version", wire.DefaultProtocolVersion, "--focus", hostileFocus}, args...)
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestInitHostileToolNames: the profile init writes from a server's tool
// names, once on its own and once rewritten by the first run, declares
// nothing but the token's header (a name with line breaks once made
// X-Injected a header of every request of the first run) and lists every
// name as the server sent it. The injecting name goes first alone, since
// with the others beside it an unfixed init fails to load its own profile
// instead; and without a token, whose headers block would replace the
// injected one.
func TestInitHostileToolNames(t *testing.T) {
	for _, token := range []string{"", "alice-token"} {
		names := hostileToolNames
		var args []string
		want := &target.Profile{}
		if token == "" {
			names = hostileToolNames[:1]
		} else {
			args = []string{"--bearer-token", token}
			want.Headers = map[string]string{"Authorization": "Bearer " + token}
		}
		h, url := newToolsMCP(t, names...)
		dir := t.TempDir()
		code, stdout, stderr := initTools(url, dir, args...)
		if code != exitOK {
			t.Fatalf("init: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if n := h.injected.Load(); n != 0 {
			t.Errorf("%d requests carried X-Injected", n)
		}
		path := filepath.Join(dir, initProfile)
		p, err := target.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if !reflect.DeepEqual(p, want) {
			t.Errorf("init's profile declares %+v, want %+v:\n%s", p, want, data)
		}
		if got := advertised(t, string(data)); !slices.Equal(got, names) {
			t.Errorf("init's profile lists the tools\n%q\nthe server sent\n%q", got, names)
		}
		if !strings.Contains(string(data), "checks each key alone would enable: tools.notifying 1.") {
			t.Errorf("the first run did not rewrite the profile:\n%s", data)
		}
	}
}

// TestInitRefusesSymlinks: a symbolic link where init would write, or on
// the way there, is refused (exit 2) before anything is written, even with
// --force and even when it dangles: init once wrote its profile where a
// dangling link in the repository pointed, out of --dir.
func TestInitRefusesSymlinks(t *testing.T) {
	_, url := newToolsMCP(t, "long_operation")
	for _, tc := range []struct {
		name, link string
		force      bool
	}{
		{"dangling profile", initProfile, false},
		{"dangling profile, --force", initProfile, true},
		{"dangling baseline, --force", initExpected, true},
		{"dangling workflow", initWorkflow, false},
		{".github", ".github", false},
		{".github/workflows, --force", ".github/workflows", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			link := filepath.Join(dir, filepath.FromSlash(tc.link))
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(outside, "evil")
			if strings.HasPrefix(tc.link, ".github") && tc.link != initWorkflow {
				to = outside // a directory that exists
			}
			if err := os.Symlink(to, link); err != nil {
				t.Fatal(err)
			}
			var args []string
			if tc.force {
				args = append(args, "--force")
			}
			code, stdout, stderr := initTools(url, dir, args...)
			if code != exitUsage || !strings.Contains(stderr, link+" is a symbolic link") {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %s is a symbolic link\n%s", code, stderr, link, stdout)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("init wrote %v out of --dir", entries)
			}
			for _, f := range []string{initProfile, initExpected, initWorkflow} {
				if st, err := os.Lstat(filepath.Join(dir, f)); err == nil && st.Mode().IsRegular() {
					t.Errorf("init wrote %s", f)
				}
			}
		})
	}
}

// TestInitTokenProfileMode: a profile that holds the --bearer-token is
// readable by its owner alone, also where --force replaces one that was
// not, and init says the file holds a secret; its other files are not.
func TestInitTokenProfileMode(t *testing.T) {
	_, url := newToolsMCP(t, "long_operation")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{initProfile, initExpected, initWorkflow} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := initTools(url, dir, "--force", "--bearer-token", "alice-token")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for f, want := range map[string]os.FileMode{initProfile: 0o600, initExpected: 0o644, initWorkflow: 0o644} {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", f, got, want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, initProfile)); !strings.Contains(string(data), `Authorization: "Bearer alice-token"`) {
		t.Errorf("the profile lacks the token:\n%s", data)
	}
	if !strings.Contains(stdout, "it holds the --bearer-token, so it is readable by you alone: mode 0600") {
		t.Errorf("init does not say the profile holds a secret:\n%s", stdout)
	}
}
