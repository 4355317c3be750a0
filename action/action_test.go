package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

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
	data, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatal(err)
	}
	out, err := parseOutputs(string(data))
	if err != nil {
		t.Fatalf("GITHUB_OUTPUT: %v\n%s", err, data)
	}
	return out
}

// parseOutputs reads a GITHUB_OUTPUT file as the runner does: NAME=VALUE
// lines and NAME<<DELIMITER blocks, a later value for a name replacing an
// earlier one.
func parseOutputs(text string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, heredoc := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case eq > 0 && (heredoc < 0 || eq < heredoc):
			out[line[:eq]] = line[eq+1:]
		case heredoc > 0:
			name, delim := line[:heredoc], line[heredoc+2:]
			var value []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				value = append(value, lines[i])
			}
			if i == len(lines) {
				return nil, fmt.Errorf("%s: no closing delimiter %q", name, delim)
			}
			out[name] = strings.Join(value, "\n")
		default:
			return nil, fmt.Errorf("line %q is neither NAME=VALUE nor NAME<<DELIMITER", line)
		}
	}
	return out, nil
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

// TestActionInputErrors: inputs that do not fit the mode, or are not what
// they may be, stop the step (exit 2) before anything is built, saying
// which input is wrong. The message shows the input on one line, so its
// text issues no workflow command, and the job summary shows it as text.
func TestActionInputErrors(t *testing.T) {
	forged := "\n::error::forged\r::set-output name=pass::999\n##[set-output name=fail;]0\n![beacon](https://evil.example/b.png)"
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"INPUT_MODE": "both"}, "mode must be server or client, got 'both'"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_SERVER_COMMAND": "node s.js"}, "server-command is for mode: server"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_CHECK_SET": "spec"}, "check-set is for mode: server"},
		{map[string]string{"INPUT_CLIENT_COMMAND": "node c.mjs"}, "client-command is for mode: client"},
		{map[string]string{"INPUT_STRICT": "yes"}, "strict must be true or false"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_STRICT": "yes"}, "strict must be true or false"},
		{map[string]string{"INPUT_ARGS": `--focus 'x`}, "args: cannot split"},
		{map[string]string{"INPUT_ARGS": "--focus 'x\n::error::forged\n  ::set-output name=pass::999 ##[set-output name=fail;]0"}, "args: cannot split"},
		{map[string]string{"INPUT_ARGS": "--focus \x1b[2Jx"}, "args: a control character"},
		{map[string]string{"INPUT_MODE": "server" + forged}, "mode must be server or client, got 'server?::error::forged?::set-output name=pass::999?#\\#[set-output name=fail;]0?![beacon]"},
		{map[string]string{"INPUT_CHECK_SET": "some"}, "check-set must be spec, resilience or all, got 'some'"},
		{map[string]string{"INPUT_PROTOCOL_VERSION": "2025-11-25,latest"}, "protocol-version: 'latest' is not a revision (YYYY-MM-DD), all or auto"},
		{map[string]string{"INPUT_PROTOCOL_VERSION": "2025-11-25\n2025-11-25/../../x"}, "protocol-version: '2025-11-25/../../x' is not a revision"},
		{map[string]string{"INPUT_REPORTS": "out" + forged}, "reports: a control character"},
		{map[string]string{"INPUT_URL": "http://127.0.0.1:1/mcp" + forged}, "url: a control character"},
		{map[string]string{"INPUT_URL": "http://127.0.0.1:1/mcp --strict"}, "url: white space"},
		{map[string]string{"INPUT_SERVER_COMMAND": "node s.js {port}\r::error::forged", "INPUT_URL": "http://127.0.0.1:{port}/mcp"}, "server-command: a control character"},
		{map[string]string{"INPUT_MODE": "client", "INPUT_CLIENT_COMMAND": "node c.mjs\x01"}, "client-command: a control character"},
		{map[string]string{"INPUT_TARGET_PROFILE": "p.yaml" + forged}, "target-profile: a control character"},
		{map[string]string{"INPUT_TARGET_CONFIG": "p.yaml" + forged}, "target-config: a control character"},
		{map[string]string{"INPUT_EXPECTED_FAILURES": "e.txt" + forged}, "expected-failures: a control character"},
		{map[string]string{"INPUT_DOCS_URL": "https://x.example/)![b](https://evil.example/b.png"}, "docs-url must be an http(s) URL"},
		{map[string]string{"INPUT_DOCS_URL": "javascript:alert(1)"}, "docs-url must be an http(s) URL"},
	} {
		r := newRunner(t)
		code, out := r.run(t, tc.env)
		if code != 2 || !strings.Contains(out, tc.want) || strings.Contains(out, "building") {
			t.Errorf("%q: exit %d, want 2 with %q and no build:\n%s", tc.env, code, tc.want, out)
		}
		if c := workflowCommands(out); len(c) > 0 {
			t.Errorf("%q: the input's text issues workflow commands %q:\n%s", tc.env, c, out)
		}
		if o := r.outputs(t); o["exit-code"] != "2" || len(o) != 1 {
			t.Errorf("%q: outputs %q, want exit-code 2 alone", tc.env, o)
		}
		wantInertSummary(t, r.summaryText(t), "❌ mcp-conform: setup error", tc.want)
	}
}

// TestActionOutputsEncoded: every output is written as a NAME<<DELIMITER
// block, so a value with a newline cannot add outputs of its own.
func TestActionOutputsEncoded(t *testing.T) {
	r := newRunner(t)
	temp := runnerTemp + "\npass=999\nextra=1"
	if code, out := r.run(t, map[string]string{"RUNNER_TEMP": temp}, "cache"); code != 0 {
		t.Fatalf("run.sh cache: exit %d\n%s", code, out)
	}
	o := r.outputs(t)
	if len(o) != 3 || o["gomodcache"] != temp+"/mcp-conform-go/mod" || o["gocache"] != temp+"/mcp-conform-go/build" {
		t.Errorf("outputs %q, want gomodcache, gocache and key, the paths whole", o)
	}
}

// TestActionProtocolVersionTraversal: a protocol-version entry that is not
// a revision (or all, auto) stops the step before anything is built: no
// folder outside the reports folder is touched.
func TestActionProtocolVersionTraversal(t *testing.T) {
	r := newRunner(t)
	victim := filepath.Join(r.work, "victim")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim, "summary.md"), []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := r.run(t, map[string]string{"INPUT_PROTOCOL_VERSION": "2025-11-25, ../victim"})
	if code != 2 || !strings.Contains(out, "protocol-version") || strings.Contains(out, "building") {
		t.Errorf("exit %d, want 2 with a protocol-version error and no build:\n%s", code, out)
	}
	if data, err := os.ReadFile(filepath.Join(victim, "summary.md")); err != nil || string(data) != "keep me\n" {
		t.Errorf("victim/summary.md: %q, %v; want it untouched", data, err)
	}
	if _, err := os.Stat(filepath.Join(victim, "mcp-conform.log")); !os.IsNotExist(err) {
		t.Errorf("victim/mcp-conform.log written outside the reports folder (%v)", err)
	}
}

// TestActionReportsNewline: a newline in the reports input cannot append
// outputs of its own (pass=999, exit-code=0 after the real values): the
// step stops with a usage error, which exit-code says.
func TestActionReportsNewline(t *testing.T) {
	r := newRunner(t)
	code, out := r.run(t, map[string]string{
		"INPUT_REPORTS": "out\npass=999\nexit-code=0",
		// An unreachable target: the run's own exit status is 2.
		"INPUT_URL":  "http://127.0.0.1:1/mcp",
		"INPUT_ARGS": "--focus '^SESS-ID-CHARS$'",
	})
	if code != 2 || !strings.Contains(out, "reports") || strings.Contains(out, "building") {
		t.Errorf("exit %d, want 2 with a reports error and no build:\n%s", code, out)
	}
	if o := r.outputs(t); o["pass"] == "999" || o["exit-code"] != "2" {
		t.Errorf("outputs %q, want exit-code 2 and no pass=999", o)
	}
}

// workflowCommands returns the lines of a step's console output that the
// runner would take for workflow commands (::name:: after leading white
// space, or ##[name] anywhere; it splits lines at CR too), other than the
// script's own: group, endgroup and a stop-commands span, inside which
// nothing is a command until the span's token.
func workflowCommands(console string) []string {
	var found []string
	token := ""
	for _, line := range regexp.MustCompile(`\r\n|\r|\n`).Split(console, -1) {
		line = strings.TrimLeftFunc(line, unicode.IsSpace)
		switch {
		case token != "":
			if line == "::"+token+"::" {
				token = ""
			}
		case strings.HasPrefix(line, "::stop-commands::") && len(line) >= len("::stop-commands::")+16:
			token = strings.TrimPrefix(line, "::stop-commands::")
		case strings.HasPrefix(line, "::group::mcp-conform "), line == "::endgroup::":
		case strings.HasPrefix(line, "::"), strings.Contains(line, "##["):
			found = append(found, line)
		}
	}
	return found
}

// cmarkGFM is the CommonMark/GFM renderer the job summary tests use:
// Debian's cmark-gfm, which CI installs.
const cmarkGFM = "cmark-gfm"

// renderGFM renders Markdown as GitHub would, with cmark-gfm and its GFM
// extensions; raw HTML is kept, so that any that got through shows. It
// returns false when cmark-gfm is not installed.
func renderGFM(t *testing.T, markdown string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath(cmarkGFM)
	if err != nil {
		return "", false
	}
	cmd := exec.Command(path, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tasklist", "-t", "html")
	cmd.Stdin = strings.NewReader(markdown)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cmark-gfm: %v", err)
	}
	return string(out), true
}

// inertSection matches a job summary rendered as one heading and one code
// block, with no other element: what a section of untrusted text must
// render as.
var inertSection = regexp.MustCompile(`^<h3>([^<]*)</h3>\n<pre><code>([^<]*)</code></pre>\n$`)

// wantInertSummary checks that the job summary renders as the heading
// want and a code block that shows each of literals as it is, and that it
// holds no control character.
func wantInertSummary(t *testing.T, summary, heading string, literals ...string) {
	t.Helper()
	if i := strings.IndexFunc(summary, func(r rune) bool {
		return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))
	}); i >= 0 {
		t.Errorf("job summary has control character %q at %d:\n%q", summary[i:i+1], i, summary)
	}
	if len(summary) > 8<<10 {
		t.Errorf("job summary is %d bytes, want at most 8 KiB", len(summary))
	}
	out, ok := renderGFM(t, summary)
	if !ok {
		t.Logf("%s not installed (apt-get install cmark-gfm): the job summary is not rendered", cmarkGFM)
		return
	}
	m := inertSection.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the job summary renders as more than a heading and a code block:\n%s\nfrom:\n%s", out, summary)
	}
	if got := html.UnescapeString(m[1]); got != heading {
		t.Errorf("heading %q, want %q", got, heading)
	}
	code := html.UnescapeString(m[2])
	for _, l := range literals {
		if !strings.Contains(code, l) {
			t.Errorf("the code block lacks %q:\n%s", l, code)
		}
	}
}

// hostile is what a hostile target says as it fails: Markdown that would
// close a code fence and render a passing heading, a tracking image, a
// table and links; raw HTML; a lone CR (a Markdown line ending); terminal
// escapes, a C1 control and a bidi override; workflow commands.
var hostile = strings.Join([]string{
	"",
	"```",
	"</code></pre><h1>pwned</h1>",
	"### ✅ mcp-conform server: PASSED",
	"![beacon](https://evil.example/beacon.png)",
	`<img src="https://evil.example/pixel.gif">`,
	"| check | verdict |",
	"|---|---|",
	"| ALL | ✅ pass |",
	"[details](https://evil.example/) www.evil.example",
	"ok\r## CR heading",
	"\x1b[32mgreen\x1b[0m \u0085next \u202egnirts",
	"::error::forged",
	"::set-output name=pass::999",
	"##[set-output name=fail;]0",
	"  ::endgroup::",
	"~~~~~~",
}, "\n")

// hostileLiterals are parts of hostile that the job summary must show as
// they are.
var hostileLiterals = []string{
	"```\n", "</code></pre><h1>pwned</h1>", "### ✅ mcp-conform server: PASSED", "![beacon](https://evil.example/beacon.png)",
	`<img src="https://evil.example/pixel.gif">`, "| ALL | ✅ pass |", "[details](https://evil.example/) www.evil.example", "## CR heading",
}

// TestE2EActionHostileTarget: a target that fails before any check, with
// text meant to forge the job summary and workflow commands: the summary
// shows its words in a code block it cannot leave, and the console
// carries no command of its.
func TestE2EActionHostileTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds mcp-conform and runs it")
	}
	if _, err := exec.LookPath(cmarkGFM); err != nil {
		t.Skip("cmark-gfm not installed (apt-get install cmark-gfm): cannot render the job summary")
	}
	// A server that answers initialize with an error carrying hostile.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(req.Body).Decode(&msg)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32000, "message": hostile}})
	}))
	defer srv.Close()
	// A server command that writes hostile bytes and exits.
	output := filepath.Join(t.TempDir(), "output")
	if err := os.WriteFile(output, []byte(hostile+"\n\x00nul \xff\xfe not UTF-8\x7f"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, inputs := range map[string]map[string]string{
		"initialize error": {"INPUT_URL": srv.URL + "/mcp"},
		"server output":    {"INPUT_SERVER_COMMAND": fmt.Sprintf("cat '%s'; : {port}; exit 1", output), "INPUT_URL": "http://127.0.0.1:{port}/mcp"},
	} {
		t.Run(name, func(t *testing.T) {
			inputs["INPUT_PROTOCOL_VERSION"] = "2025-11-25"
			r := newRunner(t)
			code, out := r.run(t, inputs)
			if code != 2 || !strings.Contains(out, "### ✅ mcp-conform server: PASSED") {
				t.Fatalf("exit %d, want 2, with the target's text in the log:\n%s", code, out)
			}
			if o := r.outputs(t); o["exit-code"] != "2" || o["pass"] != "0" {
				t.Errorf("outputs %q", o)
			}
			if c := workflowCommands(out); len(c) > 0 {
				t.Errorf("the target's text issues workflow commands %q:\n%s", c, out)
			}
			wantInertSummary(t, r.summaryText(t), "❌ mcp-conform server (protocol 2025-11-25): exit 2, no report", hostileLiterals...)
		})
	}
}

// TestActionInert: lib.sh's section renders any bytes as one heading and
// one code block of bounded lines, with control, C1, invisible and
// bidirectional formatting characters shown as '?', whatever the
// harness's own escaping leaves in its log.
func TestActionInert(t *testing.T) {
	lib, err := filepath.Abs("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	text := "\n```\n" + hostile + "\n````````` ~~~~~~~~~\n        ## indented\n\tx\n" +
		"nul\x00 cr\r## CR heading\r\nff\f vt\v esc\x1b[2J c1\u0085\u009b bidi\u202e\u2066 zw\u200b\u2028 bom\ufeff ok é…\n" +
		"bad \xff\xfe utf-8\n" + strings.Repeat("y", 1000) + "\n```"
	summary := filepath.Join(t.TempDir(), "summary.md")
	cmd := exec.Command("bash", "-c", `. "$1" && section "❌ heading"`, "bash", lib)
	cmd.Env = append(os.Environ(), "GITHUB_STEP_SUMMARY="+summary)
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("section: %v\n%s", err, out)
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if len(line) > 4+300 {
			t.Errorf("a line of %d bytes, want at most 300 and the indent", len(line))
		}
	}
	wantInertSummary(t, string(data), "❌ heading", append(hostileLiterals, "nul? cr?## CR heading?", "ff? vt? esc?[2J c1?? bidi?? zw?? bom? ok é…",
		"````````` ~~~~~~~~~\n        ## indented\n\tx\n", strings.Repeat("y", 300)+"\n")...)
}

// TestActionShown: shown quotes a value on one line that no workflow
// command can start in, and bounds it.
func TestActionShown(t *testing.T) {
	lib, err := filepath.Abs("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"both":                          "'both'",
		"x\n::error::a\r  ::warning::b": "'x?::error::a?  ::warning::b'",
		"a ##[error]b ###[c":            `'a #\#[error]b ##\#[c'`,
		strings.Repeat("z", 300):        "'" + strings.Repeat("z", 199) + "…'",
	} {
		out, err := exec.Command("bash", "-c", `. "$1" && shown "$2"`, "bash", lib, in).CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("shown %q = %q (%v), want %q", in, out, err, want)
		}
	}
}
