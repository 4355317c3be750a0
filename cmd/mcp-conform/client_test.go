package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/clients"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks"
)

// clientTimeout bounds one run of the client checks in a test.
const clientTimeout = 3 * time.Minute

// runClientSelf is runSelf for client runs, which start the client under
// test many times: a race-enabled binary would otherwise sleep a second
// at every exit (the race detector's atexit_sleep_ms).
func runClientSelf(t *testing.T, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runSelfEnv(t, d, []string{"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}, args...)
}

// TestClientReference: every client check passes against the reference
// client (the default --command), every client check runs, and both
// reports are valid.
func TestClientReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, junit, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	out, errOut, code := runClientSelf(t, clientTimeout, "client", "--json", js, "--junit", junit, "--html", page)
	if code != exitOK {
		t.Fatalf("exit %d against the reference client\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	r := readRun(t, js)
	ids := expectAllPass(t, r, catalogue.Client)
	if r.Mode != "client" || !r.Passed {
		t.Errorf("mode=%q passed=%v", r.Mode, r.Passed)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit report: %v", err)
	}
	if doc.Tests != len(ids) || doc.Failures != 0 || len(doc.Suites) != 1 || doc.Suites[0].Name != "mcp-conform client" {
		t.Errorf("JUnit: %+v, want %d tests, no failure, suite mcp-conform client", doc, len(ids))
	}
	checkClientLanes(t, page, "CLI-RESUME")
}

// clientWorkers is how many variant runs go at once: three a core (six on
// two), as a run mostly waits on the client processes it starts.
var clientWorkers = 3 * runtime.GOMAXPROCS(0)

// TestE2EClientCatchesFixtures: against each variant of the reference client,
// exactly the checks it breaks fail, those it skips are not applicable,
// and every other check passes (all of them, for a legitimate variant).
// The runs use a binary built without the race detector, a few at a time.
func TestE2EClientCatchesFixtures(t *testing.T) {
	skipShort(t, "runs the client checks against every broken client")
	t.Parallel()
	exe := buildCLI(t)
	dir := t.TempDir()
	type outcome struct {
		out, errOut string
		code        int
		err         error
	}
	all := clients.All()
	results := map[string]chan outcome{}
	for _, f := range all {
		results[f.Name] = make(chan outcome, 1)
	}
	jobs := make(chan clients.Fixture)
	for range clientWorkers {
		go func() {
			for f := range jobs {
				ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
				args := append([]string{"client", "--json", filepath.Join(dir, f.Name+".json"),
					"--command", fmt.Sprintf("%s client reference --broken %s", shellQuote(exe), f.Name)},
					scenariosOf(slices.Concat(f.Breaks, f.Skips))...)
				cmd := exec.CommandContext(ctx, exe, args...)
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				cmd.WaitDelay = 10 * time.Second
				err := cmd.Run()
				var ee *exec.ExitError
				o := outcome{out: out.String(), errOut: errOut.String()}
				switch {
				case ctx.Err() != nil:
					o.err = fmt.Errorf("no exit within %v", clientTimeout)
				case errors.As(err, &ee):
					o.code = ee.ExitCode()
				case err != nil:
					o.err = err
				}
				cancel()
				results[f.Name] <- o
			}
		}()
	}
	go func() {
		for _, f := range all {
			jobs <- f
		}
		close(jobs)
	}()
	for _, f := range all {
		t.Run(f.Name, func(t *testing.T) {
			o := <-results[f.Name]
			want := exitFail
			if !slices.ContainsFunc(f.Breaks, requiredIn2025) {
				want = exitOK
			}
			if o.err != nil || o.code != want {
				t.Fatalf("exit %d (%v), want %d\nstdout:\n%s\nstderr:\n%s", o.code, o.err, want, o.out, o.errOut)
			}
			run := readRun(t, filepath.Join(dir, f.Name+".json"))
			for _, id := range slices.Concat(f.Breaks, f.Skips) {
				if !slices.ContainsFunc(run.Checks, func(c report.Check) bool { return c.ID == id }) {
					t.Errorf("%s is not in the run against %s", id, f.Name)
				}
			}
			for _, c := range run.Checks {
				if leftOut(c) {
					continue
				}
				if skipsByDesign(c) && f.Name != "chooses-2026-07-28" {
					continue // a check of 2026-07-28 alone, which the variant was not told to speak
				}
				broken, skipped := slices.Contains(f.Breaks, c.ID), slices.Contains(f.Skips, c.ID)
				switch {
				case broken && !caught(c):
					t.Errorf("%s is %s against %s (%s): the check does not catch it", c.ID, c.Verdict, f.Name, f.About)
				case skipped && !declined(c):
					t.Errorf("%s is %s against %s (%s), want not applicable: %s", c.ID, c.Verdict, f.Name, f.About, c.Message)
				case !broken && !skipped && lacksPremise(f, c):
				case !broken && !skipped && c.Verdict != report.Pass:
					t.Errorf("%s is %s against %s, which does not break it: %s", c.ID, c.Verdict, f.Name, c.Message)
				}
			}
		})
	}
}

// lacksPremise reports a check that stood on a premise the variant f
// lacks: blocked by that premise's root alone, or skipped for want of
// what the premise would have given (saying so).
func lacksPremise(f clients.Fixture, c report.Check) bool {
	if len(f.Premises) == 0 {
		return false
	}
	return c.Verdict == report.Skip || (c.Verdict == report.Blocked && blockedOnPremise(c, func(p catalogue.Premise) bool { return slices.Contains(f.Premises, p) }))
}

// declined reports a check skipped as not applicable to the client: it
// declined what the check asked of it, had nothing the check grades, or
// chose a revision without the sessions the check needs.
func declined(c report.Check) bool {
	switch c.Cause {
	case report.NotOffered, report.NotApplicable, report.NoSessions:
		return c.Verdict == report.Skip
	}
	return false
}

// scenariosOf are the --scenario flags of a run against a broken client
// that proves the checks ids (with the checks their premises rest on):
// none when the matrix is full (see fullMatrix) or ids is empty, for a
// variant that breaks nothing: such a run is every client check.
func scenariosOf(ids []string) []string {
	if fullMatrix || len(ids) == 0 {
		return nil
	}
	var args []string
	for _, id := range suites.WithPremises(ids) {
		args = append(args, "--scenario", id)
	}
	return args
}

// requiredIn2025 reports a client check a failure of which fails a run of
// the default revision: a required one not of 2026-07-28 alone.
func requiredIn2025(id string) bool {
	e := suites.MustLookup(id)
	return e.Required(false) && !clientchecks.OnlySessionless(id)
}

// caught reports a check that did not pass against a variant that breaks
// it: failed, or warned or informed about at the SHOULD and MAY levels.
func caught(c report.Check) bool {
	return c.Verdict == report.Fail || c.Verdict == report.Warn || c.Verdict == report.Info
}

// TestE2EClientWrapper: the shell wrapper around `mcp-conform call` passes
// what it can do and declines show, which is reported not applicable.
func TestE2EClientWrapper(t *testing.T) {
	skipShort(t, "runs the client checks against the call wrapper")
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper, err := filepath.Abs("../../fixtures/clients/call.sh")
	if err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runClientSelf(t, clientTimeout, "client", "--command", shellQuote(wrapper)+" "+shellQuote(exe),
		"--scenario", "CLI-PERSIST,CLI-RESUME", "--scenario", "CLI-CLEAR-ON-DISCONNECT", "--json", js)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got := map[string]report.Check{}
	for _, c := range readRun(t, js).Checks {
		got[c.ID] = c
	}
	for _, id := range []string{"CLI-PERSIST", "CLI-CLEAR-ON-DISCONNECT"} {
		if c := got[id]; !declined(c) {
			t.Errorf("%s: %s %q, want a not-applicable skip", id, c.Verdict, c.Message)
		}
	}
	if c := got["CLI-RESUME"]; c.Verdict != report.Pass {
		t.Errorf("CLI-RESUME: %s (%s)", c.Verdict, c.Message)
	}
	if c := got["CLI-STATUS"]; c.Verdict != report.Skip || c.Cause != report.NotSelected {
		t.Errorf("CLI-STATUS: %s %q, want not selected", c.Verdict, c.Message)
	}
}

// TestE2EClientBaseline: a listed failure is an expected failure (exit 0); a
// listed check that passes is stale and fails the run.
func TestE2EClientBaseline(t *testing.T) {
	skipShort(t, "runs client checks against a broken client and the reference")
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	baseline := filepath.Join(dir, "expected.txt")
	if err := os.WriteFile(baseline, []byte("# gives up on a plain 404\nCLI-404-REINIT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := fmt.Sprintf("%s client reference --broken gives-up-on-404", shellQuote(exe))
	js := filepath.Join(dir, "r.json")
	out, errOut, code := runClientSelf(t, clientTimeout, "client", "--command", broken, "--scenario", "CLI-404-REINIT",
		"--expected-failures", baseline, "--json", js)
	if code != exitOK || verdictOf(t, js, "CLI-404-REINIT") != report.ExpectedFailure {
		t.Fatalf("broken client with baseline: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runClientSelf(t, clientTimeout, "client", "--scenario", "CLI-404-REINIT",
		"--expected-failures", baseline, "--json", js)
	if code != exitFail || verdictOf(t, js, "CLI-404-REINIT") != report.Stale {
		t.Fatalf("reference client with baseline: exit %d, want %d (stale)\nstdout:\n%s\nstderr:\n%s", code, exitFail, out, errOut)
	}
}

// TestClientUsage: bad flags and bad baselines exit 2 with one message.
func TestClientUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverIDs := filepath.Join(dir, "server.txt")
	if err := os.WriteFile(serverIDs, []byte("SESS-DELETE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "CLI-NOPE"}, "not client checks: CLI-NOPE"},
		{[]string{"--scenario", "SESS-DELETE"}, "not client checks: SESS-DELETE"},
		{[]string{"--expected-failures", serverIDs}, "not client checks: SESS-DELETE"},
		{[]string{"--command", " "}, "--command is empty"},
		{[]string{"--parallel", "-2"}, "--parallel must be 1 or more, got -2"},
		{[]string{"--json", filepath.Join(dir, "missing", "r.json")}, "does not exist"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"reference"}, "want exactly one argument"},
	} {
		_, errOut, code := runClientSelf(t, time.Minute, append([]string{"client"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("client %v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
}

// TestClientUsageSessionless: the help names every client check that runs
// under 2026-07-28, not the task checks alone.
func TestClientUsageSessionless(t *testing.T) {
	t.Parallel()
	_, errOut, code := runClientSelf(t, time.Minute, "client", "-h")
	if code != exitOK {
		t.Fatalf("client -h: exit %d, stderr %q", code, errOut)
	}
	for _, id := range []string{"CLI-TASK-PERSIST", "CLI-REISSUE", "CLI-UPGRADE", "CLI-DOWNGRADE", "CLI-REVISION-CACHE", "CLI-LISTEN-AGAIN"} {
		if !strings.Contains(errOut, id) {
			t.Errorf("client -h does not name %s among the checks of 2026-07-28:\n%s", id, errOut)
		}
	}
	if strings.Contains(errOut, "CLI-RESUME,") {
		t.Errorf("client -h names CLI-RESUME, which needs sessions, among the checks of 2026-07-28:\n%s", errOut)
	}
}

// verdictOf returns a check's verdict in a --json report.
func verdictOf(t *testing.T, path, id string) report.Verdict {
	t.Helper()
	for _, c := range readRun(t, path).Checks {
		if c.ID == id {
			return c.Verdict
		}
	}
	t.Fatalf("%s is not in the report", id)
	return ""
}

// TestE2EClientCatchesTaskFixturesModern: under --protocol-version 2026-07-28
// the catalogue's Sessionless client checks (the CLI-TASK-* ones) pass on
// the reference client and each fails on the variants that break it;
// every check that needs sessions is not applicable. A broken variant's
// run is focused on the checks it breaks and skips, unless the matrix is
// full; the reference's is the whole suite.
func TestE2EClientCatchesTaskFixturesModern(t *testing.T) {
	skipShort(t, "runs the task checks against the broken task clients")
	t.Parallel()
	exe := buildCLI(t)
	dir := t.TempDir()
	sessionless := func(id string) bool { return suites.MustLookup(id).Revisions.Has(wire.Revision20260728) }
	sessionlessChecks := 0
	for _, e := range suites.Of(catalogue.Client) {
		if sessionless(e.ID) {
			sessionlessChecks++
		}
	}
	variants := []clients.Fixture{{Name: "reference"}}
	for _, f := range clients.All() {
		if slices.ContainsFunc(f.Breaks, sessionless) {
			variants = append(variants, f)
		}
	}
	for _, f := range variants {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			command := shellQuote(exe) + " client reference"
			if f.Name != "reference" {
				command += " --broken " + f.Name
			}
			js := filepath.Join(dir, f.Name+".json")
			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			var focus []string
			if f.Name != "reference" {
				focus = scenariosOf(slices.Concat(f.Breaks, f.Skips))
			}
			args := append([]string{"client", "--protocol-version", "2026-07-28", "--json", js, "--command", command}, focus...)
			cmd := exec.CommandContext(ctx, exe, args...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			cmd.WaitDelay = 10 * time.Second
			err := cmd.Run()
			want := exitFail
			if !slices.ContainsFunc(f.Breaks, func(id string) bool { return sessionless(id) && suites.MustLookup(id).Required(false) }) {
				want = exitOK
			}
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, out.String(), errOut.String())
			}
			r := readRun(t, js)
			if r.ProtocolVersion != "2026-07-28" {
				t.Errorf("report protocol version %q", r.ProtocolVersion)
			}
			if !strings.Contains(out.String(), "(protocol 2026-07-28, ") {
				t.Errorf("the run's header does not name the revision it grades:\n%s", out.String())
			}
			tasks := 0
			for _, c := range r.Checks {
				task := sessionless(c.ID)
				broken, skipped := slices.Contains(f.Breaks, c.ID), slices.Contains(f.Skips, c.ID)
				switch {
				case focus != nil && c.Verdict == report.Skip && c.Cause == report.NotSelected:
				case !task && (c.Verdict != report.Skip || c.Cause != report.NoSessions):
					t.Errorf("%s is %s (%s), want not applicable under 2026-07-28", c.ID, c.Verdict, c.Message)
				case task && skipped && !declined(c):
					t.Errorf("%s is %s against %s (%s), want not applicable: %s", c.ID, c.Verdict, f.Name, f.About, c.Message)
				case task && skipped:
				case task && broken && !caught(c):
					t.Errorf("%s is %s against %s (%s): the check does not catch it", c.ID, c.Verdict, f.Name, f.About)
				case task && !broken && lacksPremise(f, c):
				case task && !broken && c.Verdict != report.Pass:
					t.Errorf("%s is %s against %s, which does not break it: %s", c.ID, c.Verdict, f.Name, c.Message)
				}
				if task {
					tasks++
				}
			}
			if tasks != sessionlessChecks {
				t.Errorf("%d sessionless checks ran, want the catalogue's %d", tasks, sessionlessChecks)
			}
		})
	}
}

// TestE2EClientHangIsBounded: against a client that never prints a line nor
// ends, the measured run gives up once it has shown no sign of life for
// a while, and a check that waits for a run to end and one that waits for
// a line fail at the run's budget (no undisturbed run timed: the fallback
// allowance plus the scenario's waits), not at a blanket timeout; each
// message says what was awaited, for how long, and why it is the
// client's failure.
func TestE2EClientHangIsBounded(t *testing.T) {
	skipShort(t, "waits for the measured run and two runs' budgets")
	t.Parallel()
	wants := map[string]*regexp.Regexp{
		"CLI-STATUS":       regexp.MustCompile(`^run 1 \(call\) still running ([0-9.]+m?s) after it started, past its budget of ([0-9.]+m?s); it sent no request and printed nothing: the client does not finish\n`),
		"CLI-TASK-PERSIST": regexp.MustCompile(`^waited ([0-9.]+m?s) for the server to see a tasks/ request after the task-augmented tools/call was answered with a created task during run 1, in vain, past its budget of ([0-9.]+m?s); it sent no request`),
	}
	js := filepath.Join(t.TempDir(), "r.json")
	began := time.Now()
	out, errOut, code := runClientSelf(t, clientTimeout, "client", "--command", "sleep 600 #",
		"--scenario", "CLI-STATUS", "--scenario", "CLI-TASK-PERSIST", "--json", js)
	took := time.Since(began)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, out, errOut)
	}
	if !strings.Contains(out, "measured: the client's undisturbed run could not be timed (it sent no request and printed nothing for 10s)") {
		t.Errorf("the measured run is not reported as untimed:\n%s", out)
	}
	longest := time.Duration(0)
	for _, c := range readRun(t, js).Checks {
		want := wants[c.ID]
		if want == nil {
			continue
		}
		m := want.FindStringSubmatch(c.Message)
		if c.Verdict != report.Fail || m == nil {
			t.Errorf("%s: %s %q; want a failure matching %q", c.ID, c.Verdict, c.Message, want)
			continue
		}
		waited, err1 := time.ParseDuration(m[1])
		budget, err2 := time.ParseDuration(m[2])
		// The budget runs from the run's start; a wait for a line began
		// a little later.
		if err1 != nil || err2 != nil || waited < budget-time.Second || waited > budget+3*time.Second {
			t.Errorf("%s waited %s; the run's budget is %s", c.ID, m[1], m[2])
		}
		longest = max(longest, budget)
	}
	// Generous: the checks run side by side after the measured run.
	if bound := clientchecks.MeasureQuiet + longest + 8*time.Second; took > bound {
		t.Errorf("the run took %v, more than %v", took.Round(time.Second), bound)
	}
}

// runClientChecks runs the named client checks against command and
// returns their results by ID; a usage or setup error fails the test.
func runClientChecks(t *testing.T, command string, ids ...string) map[string]report.Check {
	t.Helper()
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runClientSelf(t, clientTimeout, "client", "--command", command, "--scenario", strings.Join(ids, ","), "--json", js)
	if code != exitOK && code != exitFail {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got := map[string]report.Check{}
	for _, c := range readRun(t, js).Checks {
		got[c.ID] = c
	}
	return got
}

// brokenClient is the command of a broken reference client.
func brokenClient(t *testing.T, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s client reference --broken %s", shellQuote(exe), name)
}

// TestE2EClientFaultsOnWhatTheServerSees: the checks that kill or interrupt
// a call in flight do so once the scripted server has sent the call a
// notification, not once the client printed one, so a client that hands
// no notification to its application is graded on what they are about.
func TestE2EClientFaultsOnWhatTheServerSees(t *testing.T) {
	skipShort(t, "runs client checks against a broken client")
	t.Parallel()
	got := runClientChecks(t, brokenClient(t, "hides-notifications"), "CLI-RECONNECT", "CLI-CLEAR-ON-DISCONNECT", "CLI-RETRY-ONCE")
	for _, id := range []string{"CLI-RECONNECT", "CLI-CLEAR-ON-DISCONNECT", "CLI-RETRY-ONCE"} {
		if c := got[id]; c.Verdict != report.Pass {
			t.Errorf("%s is %s against a client that prints no notification: %s", id, c.Verdict, c.Message)
		}
	}
}

// TestE2EClientNoProgressToken: a client that calls without a progressToken,
// as the specification allows, passes the checks that count a call's
// notifications: they count its log messages, which need no token.
func TestE2EClientNoProgressToken(t *testing.T) {
	skipShort(t, "runs client checks against a broken client")
	t.Parallel()
	got := runClientChecks(t, brokenClient(t, "no-progress-token"), "CLI-RESUME", "CLI-RETRY-FIELD", "CLI-PERSIST")
	for _, id := range []string{"CLI-RESUME", "CLI-RETRY-FIELD", "CLI-PERSIST"} {
		if c := got[id]; c.Verdict != report.Pass {
			t.Errorf("%s is %s against a client that sends no progressToken: %s", id, c.Verdict, c.Message)
		}
	}
}

// TestE2EClientFallbackNeedsARejoin: CLI-FALLBACK is not applicable to a
// client that never presents its stored session (nothing to fall back
// from), not a pass, and still fails one that presents it and gives up.
func TestE2EClientFallbackNeedsARejoin(t *testing.T) {
	skipShort(t, "runs client checks against a broken client")
	t.Parallel()
	c := runClientChecks(t, brokenClient(t, "reconnect-fresh"), "CLI-FALLBACK")["CLI-FALLBACK"]
	if c.Verdict != report.Skip || c.Cause != report.NotApplicable || !strings.HasPrefix(c.Message, "not applicable: after the restart run 2 never presented session ") {
		t.Errorf("CLI-FALLBACK against a client that never rejoins: %s %q, want not applicable", c.Verdict, c.Message)
	}
	if c := runClientChecks(t, brokenClient(t, "no-fallback"), "CLI-FALLBACK")["CLI-FALLBACK"]; c.Verdict != report.Fail {
		t.Errorf("CLI-FALLBACK against no-fallback: %s %q, want a failure", c.Verdict, c.Message)
	}
}

// TestE2EClientChoosesItsRevision: a client that speaks 2026-07-28 by itself,
// not told to, is graded in that revision: every check that needs
// sessions is not applicable, saying why, and the task checks pass.
func TestE2EClientChoosesItsRevision(t *testing.T) {
	skipShort(t, "runs the client checks against a broken client")
	t.Parallel()
	got := runClientChecks(t, brokenClient(t, "chooses-2026-07-28"), suites.IDs(catalogue.Client)...)
	for _, e := range suites.Of(catalogue.Client) {
		c := got[e.ID]
		modern := e.Revisions.Has(wire.Revision20260728)
		switch {
		case modern && c.Verdict != report.Pass:
			t.Errorf("%s is %s against a client that chose 2026-07-28: %s", e.ID, c.Verdict, c.Message)
		case !modern && (c.Verdict != report.Skip || !strings.Contains(c.Message, "the client speaks 2026-07-28 by itself")):
			t.Errorf("%s is %s (%s), want not applicable: the client speaks 2026-07-28", e.ID, c.Verdict, c.Message)
		}
	}
}

// TestE2EClientCancelReachesTheClientOnly: the user's cancel is a SIGINT to
// the client process, not its process group: a bridge that ignores it
// fails CLI-CANCEL-WAIT though its child would have ended with a group
// signal, and the reference client, which ends the wait itself, passes.
func TestE2EClientCancelReachesTheClientOnly(t *testing.T) {
	skipShort(t, "runs client checks against a broken client and the reference")
	t.Parallel()
	c := runClientChecks(t, brokenClient(t, "bridge-ignores-cancel"), "CLI-CANCEL-WAIT")["CLI-CANCEL-WAIT"]
	// It either waits on, or, once the held initialize is answered, goes
	// on and sends the call again.
	if c.Verdict != report.Fail || !(strings.HasPrefix(c.Message, "the client was still waiting") || strings.Contains(c.Message, "the call was sent again after the user's cancel")) {
		t.Errorf("CLI-CANCEL-WAIT against a bridge that ignores the cancel: %s %q, want a failure", c.Verdict, c.Message)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if c := runClientChecks(t, shellQuote(exe)+" client reference", "CLI-CANCEL-WAIT")["CLI-CANCEL-WAIT"]; c.Verdict != report.Pass {
		t.Errorf("CLI-CANCEL-WAIT against the reference client: %s %q", c.Verdict, c.Message)
	}
}

// TestE2EClientExtensionsSaySo: a check that rests on this project's
// resilience extensions (the recovery hint, data.resume, the allow-list
// of session-expired errors) says so when it fails, and a client that
// does what the specification requires on a 404 is told it did.
func TestE2EClientExtensionsSaySo(t *testing.T) {
	skipShort(t, "runs client checks against broken clients")
	t.Parallel()
	const ext = "this project's resilience extension, not the MCP specification"
	for _, tc := range []struct{ fixture, id, also string }{
		{"ignores-new-session-id", "CLI-RESTART-HINT", "Starting a new session on a 404 is what the MCP specification requires"},
		{"drops-resume-hint", "CLI-ENVELOPE", "data.resume"},
		{"retries-any-error", "CLI-RETRY-ONCE", "allow-list"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			c := runClientChecks(t, brokenClient(t, tc.fixture), tc.id)[tc.id]
			first := strings.SplitN(c.Message, "\n", 2)[0]
			if c.Verdict != report.Fail || !strings.Contains(first, ext) || !strings.Contains(first, tc.also) {
				t.Errorf("%s against %s: %s %q; want a failure whose first line says %q and %q", tc.id, tc.fixture, c.Verdict, c.Message, ext, tc.also)
			}
		})
	}
}

// TestE2EClientMessagesNameTheCause: against the Go SDK's client, which gives
// up at every 404, the checks it fails by ending with an error each say
// what the client had to do, on one line, and quote the client's own
// error on the next, with no assertion dump.
func TestE2EClientMessagesNameTheCause(t *testing.T) {
	skipShort(t, "runs client checks against the Go SDK's client")
	t.Parallel()
	adapter := filepath.Join(t.TempDir(), "gosdk-client")
	if out, err := exec.Command("go", "build", "-o", adapter, "../../fixtures/thirdparty/clients/gosdk").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ids := []string{"CLI-404-REINIT", "CLI-ENVELOPE", "CLI-RETRY-ONCE", "CLI-RESTART-HINT", "CLI-STATUS"}
	got := runClientChecks(t, adapter, ids...)
	firsts := map[string]string{}
	for _, id := range ids {
		c := got[id]
		lines := strings.Split(c.Message, "\n")
		if c.Verdict != report.Fail || len(lines) != 2 || !strings.Contains(lines[0], "ended with exit status 1: ") || !strings.HasPrefix(lines[1], "(the client's error: ") {
			t.Errorf("%s: %s %q; want what the client had to do, then its error", id, c.Verdict, c.Message)
		}
		if other, ok := firsts[lines[0]]; ok {
			t.Errorf("%s and %s fail with the same message %q", other, id, lines[0])
		}
		firsts[lines[0]] = id
	}
}
