package action

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// actionFile is action.yml, as far as the tests read it.
type actionFile struct {
	Inputs  map[string]struct{ Default string } `json:"inputs"`
	Outputs map[string]struct{ Value string }   `json:"outputs"`
	Runs    struct {
		Using string `json:"using"`
		Steps []struct {
			ID   string            `json:"id"`
			Uses string            `json:"uses"`
			With map[string]string `json:"with"`
			Env  map[string]string `json:"env"`
			Run  string            `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

func loadAction(t *testing.T) (*actionFile, string) {
	t.Helper()
	data, err := os.ReadFile("../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.UnmarshalStrict(data, &a, yaml.DisallowUnknownFields); err != nil {
		// Fields the tests do not read (name, branding...) are fine.
		if err := yaml.Unmarshal(data, &a); err != nil {
			t.Fatalf("action.yml: %v", err)
		}
	}
	return &a, string(data)
}

// TestActionDeclarations: every input action.yml declares reaches the
// script, every input its steps use is declared, every INPUT_ variable the
// script reads is set, and every output reads a value the script writes.
func TestActionDeclarations(t *testing.T) {
	a, text := loadAction(t)
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using %q, want composite", a.Runs.Using)
	}
	script, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\binputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(text, -1) {
		used[m[1]] = true
	}
	for name := range a.Inputs {
		if !used[name] {
			t.Errorf("input %s is declared but no step uses it", name)
		}
	}
	for name := range used {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("inputs.%s is used but not declared", name)
		}
	}
	// The run step hands each input to the script as INPUT_<NAME>.
	set := map[string]bool{}
	runs := 0
	for _, s := range a.Runs.Steps {
		if !strings.Contains(s.Run, "action/run.sh") {
			continue
		}
		runs++
		for k, v := range s.Env {
			set[k] = true
			if m := regexp.MustCompile(`^\$\{\{ inputs\.([a-z0-9-]+) \}\}$`).FindStringSubmatch(v); m != nil {
				if want := "INPUT_" + strings.ToUpper(strings.ReplaceAll(m[1], "-", "_")); k != want {
					t.Errorf("inputs.%s is passed as %s, want %s", m[1], k, want)
				}
			}
		}
	}
	if runs != 2 {
		t.Errorf("%d steps run action/run.sh, want 2 (cache paths, run)", runs)
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{?(INPUT_[A-Z_]+|MCP_CONFORM_[A-Z_]+)`).FindAllStringSubmatch(string(script), -1) {
		read[m[1]] = true
	}
	for v := range read {
		if !set[v] {
			t.Errorf("run.sh reads $%s, which no step sets", v)
		}
	}
	for v := range set {
		if (strings.HasPrefix(v, "INPUT_") || strings.HasPrefix(v, "MCP_CONFORM_")) && !read[v] {
			t.Errorf("the run step sets %s, which run.sh never reads", v)
		}
	}
	written := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*output ([a-z-]+) `).FindAllStringSubmatch(string(script), -1) {
		written[m[1]] = true
	}
	for name, o := range a.Outputs {
		m := regexp.MustCompile(`^\$\{\{ steps\.run\.outputs\.([a-z-]+) \}\}$`).FindStringSubmatch(o.Value)
		if m == nil || !written[m[1]] {
			t.Errorf("output %s = %q: not a value run.sh writes", name, o.Value)
		}
	}
	for _, want := range []string{"pass", "fail", "skip", "inconclusive"} {
		if _, ok := a.Outputs[want]; !ok {
			t.Errorf("no output %s", want)
		}
	}
	// The build comes from the action's own checkout, with its Go.
	var setupGo, cache bool
	for _, s := range a.Runs.Steps {
		setupGo = setupGo || (strings.HasPrefix(s.Uses, "actions/setup-go@") && s.With["go-version-file"] == "${{ github.action_path }}/go.mod")
		cache = cache || (strings.HasPrefix(s.Uses, "actions/cache@") && strings.Contains(s.With["key"], "steps.cache-paths.outputs.key"))
	}
	if !setupGo || !cache {
		t.Errorf("want actions/setup-go with the action's go.mod (%v) and actions/cache keyed on its go.sum (%v)", setupGo, cache)
	}
}

// runner is a local stand-in for a GitHub runner: the files behind
// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY, a workspace, and RUNNER_TEMP,
// shared by the tests so the script's build of mcp-conform is reused.
type runner struct {
	work, output, summary string
}

var runnerTemp string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-conform-action-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runnerTemp = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bin is where run.sh puts the mcp-conform it builds.
func bin() string { return filepath.Join(runnerTemp, "mcp-conform-bin", "mcp-conform") }

func newRunner(t *testing.T) *runner {
	dir := t.TempDir()
	r := &runner{work: filepath.Join(dir, "work"), output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary.md")}
	if err := os.Mkdir(r.work, 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs run.sh with inputs (INPUT_ variables and others) and returns
// its exit status and console output.
func (r *runner) run(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	script, err := filepath.Abs("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Dir = r.work
	cmd.WaitDelay = 10 * time.Second
	// The runner's own variables, if these tests run on one, stay out.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "GITHUB_") && !strings.HasPrefix(k, "INPUT_") &&
			!strings.HasPrefix(k, "MCP_CONFORM_") && !strings.HasPrefix(k, "RUNNER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+r.output, "GITHUB_STEP_SUMMARY="+r.summary, "RUNNER_TEMP="+runnerTemp)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run.sh: %v\n%s", err, out.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("run.sh did not finish:\n%s", out.String())
	}
	return code, out.String()
}

// outputs reads the step outputs run.sh wrote.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(r.output)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %q", sc.Text())
		}
		out[k] = v
	}
	return out
}

func (r *runner) summaryText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(r.summary)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readRun decodes a JSON report.
func readRun(t *testing.T, path string) *report.Run {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	return &run
}

// wantCounts checks that the outputs are the counts of the JSON reports.
func wantCounts(t *testing.T, outputs map[string]string, runs ...*report.Run) {
	t.Helper()
	for _, v := range []report.Verdict{report.Pass, report.Fail, report.Warn, report.Skip, report.Inconclusive, report.Blocked, report.Stale, report.ExpectedFailure} {
		n := 0
		for _, run := range runs {
			n += run.Counts[v]
		}
		if got := outputs[string(v)]; got != fmt.Sprint(n) {
			t.Errorf("output %s = %q, want %d (the JSON reports' counts)", v, got, n)
		}
	}
	d := 0
	for _, run := range runs {
		d += run.Defects
	}
	if outputs["defects"] != fmt.Sprint(d) {
		t.Errorf("output defects = %q, want %d", outputs["defects"], d)
	}
}

func wantFiles(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"junit.xml", "mcp-conform.json", "report.html", "summary.md", "mcp-conform.log", "badge.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("report %s: missing or empty (%v)", f, err)
		}
	}
}

func wantContains(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

// TestActionCachePaths: the cache step names dedicated Go caches under
// RUNNER_TEMP and a key from go.sum.
func TestActionCachePaths(t *testing.T) {
	r := newRunner(t)
	if code, out := r.run(t, nil, "cache"); code != 0 {
		t.Fatalf("run.sh cache: exit %d\n%s", code, out)
	}
	o := r.outputs(t)
	if !strings.HasPrefix(o["gomodcache"], runnerTemp) || !strings.HasPrefix(o["gocache"], runnerTemp) ||
		!regexp.MustCompile(`^mcp-conform-go-[0-9a-f]{16}$`).MatchString(o["key"]) {
		t.Errorf("cache outputs %v", o)
	}
}

// TestE2EActionServerReference: server mode against the embedded reference,
// with extra arguments; the reports, the job summary (linking to the
// action's repository at its ref) and the outputs.
func TestE2EActionServerReference(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds mcp-conform and runs checks")
	}
	r := newRunner(t)
	code, out := r.run(t, map[string]string{
		"INPUT_ARGS":                    `--focus '^(SESS-UNKNOWN-404|SESS-ID-CHARS|ENVELOPE-404)$' --parallel 2`,
		"INPUT_REPORTS":                 "out/reports",
		"GITHUB_SERVER_URL":             "https://github.example",
		"MCP_CONFORM_ACTION_REPOSITORY": "someone/mcp-conform",
		"MCP_CONFORM_ACTION_REF":        "v1.2.3",
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// Used at a release tag, the build is that release.
	if !strings.Contains(out, "\nmcp-conform v1.2.3 (commit ") {
		t.Errorf("the log does not say which mcp-conform was built:\n%s", out)
	}
	dir := filepath.Join(r.work, "out/reports")
	wantFiles(t, dir)
	run := readRun(t, filepath.Join(dir, "mcp-conform.json"))
	if run.Counts[report.Pass] != 3 || run.Target == "" {
		t.Errorf("JSON report: %+v", run.Counts)
	}
	o := r.outputs(t)
	wantCounts(t, o, run)
	if o["exit-code"] != "0" || o["reports"] != "out/reports" {
		t.Errorf("outputs %v", o)
	}
	wantContains(t, "job summary", r.summaryText(t), "### ✅ mcp-conform server: PASSED", "3 pass",
		"- ✅ **ENVELOPE-404@2025-11-25** (RES)", "(https://github.example/someone/mcp-conform/blob/v1.2.3/docs/resilience.md#")
}

// TestE2EActionClientReference: client mode with the reference client, once
// per protocol version, each version's reports in a folder of its own.
func TestE2EActionClientReference(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds mcp-conform and runs checks")
	}
	r := newRunner(t)
	code, out := r.run(t, map[string]string{
		"INPUT_MODE":             "client",
		"INPUT_PROTOCOL_VERSION": "2025-11-25, 2026-07-28",
		"INPUT_ARGS":             "--scenario CLI-404-REINIT --scenario CLI-TASK-PERSIST",
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var runs []*report.Run
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		dir := filepath.Join(r.work, "mcp-conform-reports", v)
		wantFiles(t, dir)
		runs = append(runs, readRun(t, filepath.Join(dir, "mcp-conform.json")))
	}
	if runs[0].Counts[report.Pass] != 2 || runs[1].Counts[report.Pass] != 1 {
		t.Errorf("passes %d and %d, want 2 (2025-11-25) and 1 (2026-07-28: CLI-404-REINIT is not applicable)", runs[0].Counts[report.Pass], runs[1].Counts[report.Pass])
	}
	wantCounts(t, r.outputs(t), runs...)
	s := r.summaryText(t)
	if n := strings.Count(s, "### ✅ mcp-conform client: PASSED"); n != 2 {
		t.Errorf("%d passing client headings in the job summary, want 2:\n%s", n, s)
	}
}

// TestE2EActionBrokenFixture: a fixture that breaks one check fails the step
// (exit 1) with the failure in the job summary; with that check in the
// expected-failures file the step passes.
func TestE2EActionBrokenFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds mcp-conform and runs checks")
	}
	profile, err := filepath.Abs("../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	inputs := map[string]string{
		// run.sh builds mcp-conform before it starts the server, so the
		// command can name the binary it builds.
		"INPUT_SERVER_COMMAND": fmt.Sprintf("'%s' fixture --addr 127.0.0.1:{port} unknown-id-400", bin()),
		"INPUT_URL":            "http://127.0.0.1:{port}/mcp",
		"INPUT_TARGET_PROFILE": profile,
		"INPUT_CHECK_SET":      "all",
		"INPUT_STRICT":         "true",
		"INPUT_ARGS":           `--focus '^(SESS-UNKNOWN-404|SESS-ID-CHARS)$'`,
	}
	code, out := r.run(t, inputs)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	run := readRun(t, filepath.Join(r.work, "mcp-conform-reports", "mcp-conform.json"))
	o := r.outputs(t)
	wantCounts(t, o, run)
	if o["fail"] != "1" || o["pass"] != "1" || o["exit-code"] != "1" {
		t.Errorf("outputs %v", o)
	}
	wantContains(t, "job summary", r.summaryText(t), "### ❌ mcp-conform server: FAILED", "#### Failures (1)", "- ❌ **SESS-UNKNOWN-404@2025-11-25** (MUST): ")
	badge, err := os.ReadFile(filepath.Join(r.work, "mcp-conform-reports", "badge.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schemaVersion":1,"label":"MCP reconnection","message":"1/2 MUST","color":"red"}` + "\n"; string(badge) != want {
		t.Errorf("badge %s, want %s", badge, want)
	}

	baseline := filepath.Join(r.work, "expected-failures.txt")
	if err := os.WriteFile(baseline, []byte("SESS-UNKNOWN-404  # GET and DELETE of an unknown session get 400\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs["INPUT_EXPECTED_FAILURES"] = baseline
	r = newRunner(t)
	if code, out := r.run(t, inputs); code != 0 {
		t.Fatalf("with the baseline: exit %d, want 0\n%s", code, out)
	}
	if o := r.outputs(t); o["expected-failure"] != "1" || o["fail"] != "0" {
		t.Errorf("with the baseline: outputs %v", o)
	}
}

// TestActionInputErrors: inputs that do not fit the mode stop the step
// (exit 2) before anything is built, saying which input is wrong.
func TestActionInputErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"INPUT_MODE": "both"}, "mode must be server or client, got 'both'"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_SERVER_COMMAND": "node s.js"}, "server-command is for mode: server"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_CHECK_SET": "spec"}, "check-set is for mode: server"},
		{map[string]string{"INPUT_CLIENT_COMMAND": "node c.mjs"}, "client-command is for mode: client"},
		{map[string]string{"INPUT_STRICT": "yes"}, "strict must be true or false"},
		{map[string]string{"INPUT_ARGS": `--focus 'x`}, "args: cannot split"},
	} {
		r := newRunner(t)
		code, out := r.run(t, tc.env)
		if code != 2 || !strings.Contains(out, tc.want) || strings.Contains(out, "building") {
			t.Errorf("%v: exit %d, want 2 with %q and no build:\n%s", tc.env, code, tc.want, out)
		}
		wantContains(t, "job summary", r.summaryText(t), tc.want)
	}
}
