package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
)

// suiteTimeout bounds one full run of the server suites in a test.
const suiteTimeout = 4 * time.Minute

// readRun decodes a --json report.
func readRun(t *testing.T, path string) *report.Run {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	return &r
}

// TestE2EServerReference: the whole suite passes against the embedded
// reference server, every server check runs, and both reports are valid.
// Under the race detector it is the race pass of the harness and the
// reference together: the verdicts then hang on timings the detector
// stretches several times, so it asserts only that no race was found.
func TestE2EServerReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, junit, page := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	out, errOut, code := runSelf(t, suiteTimeout, "server", "--json", js, "--junit", junit, "--html", page)
	if raceBuild {
		if code == raceExit || strings.Contains(errOut, "WARNING: DATA RACE") {
			t.Fatalf("the race detector found a race in the harness or the reference (exit %d):\n%s", code, errOut)
		}
		t.Logf("race pass: exit %d, no race found; verdicts are checked by the build without the race detector", code)
		return
	}
	if code != exitOK {
		t.Fatalf("exit %d against the reference\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	r := readRun(t, js)
	// The reference speaks both revisions: with no --protocol-version the
	// run finds that and checks each.
	if !slices.Equal(r.Revisions, []string{wire.DefaultProtocolVersion, wire.SessionlessProtocolVersion}) {
		t.Errorf("revisions %v, want both: the default discovers what the target speaks", r.Revisions)
	}
	ids := expectAllPass(t, r, catalogue.Server)
	if !r.Passed || r.SchemaVersion != report.SchemaVersion {
		t.Errorf("passed=%v schema=%d", r.Passed, r.SchemaVersion)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name  string `xml:"name,attr"`
				Props []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit report: %v", err)
	}
	if doc.Tests != len(ids) || doc.Failures != 0 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(ids) {
		t.Errorf("JUnit: tests=%d failures=%d, want %d and 0", doc.Tests, doc.Failures, len(ids))
	}
	if !strings.Contains(out, "PASSED:") {
		t.Errorf("no summary line in console output:\n%s", out)
	}
	checkHTMLTimeline(t, page, "REDIRECT-ORPHANED@"+wire.DefaultProtocolVersion, "pass")
	if st, err := os.Stat(page); err != nil {
		t.Error(err)
	} else if st.Size() > maxHTMLReport {
		t.Errorf("HTML report of %d bytes, want at most %d", st.Size(), maxHTMLReport)
	} else if js, err := os.Stat(js); err == nil {
		// README quotes these sizes.
		t.Logf("reports of the full reference run: HTML %d KB, JSON %d KB", st.Size()>>10, js.Size()>>10)
	}
}

// raceExit is the exit status a process built with -race ends with when
// the detector found a race (GORACE's exitcode default).
const raceExit = 66

// fixtureWorkers is how many fixture runs go at once across the package's
// tests (TestE2EServerCatchesFixtures and TestE2EServerCatchesFixturesModern
// share fixturePool): two a core. Each runs fixtureParallel checks at once,
// the harness's default for the machine, so the checks in flight follow the
// cores (at most 40 on two) rather than a constant: a run mostly waits on the
// profile's timings, and what a busy machine still stretches past a check's
// premise the harness reports inconclusive and retries.
var fixtureWorkers = 2 * runtime.GOMAXPROCS(0)

// fixturePool holds a token per fixture run in progress.
var fixturePool = make(chan struct{}, fixtureWorkers)

// fixtureParallel is each fixture run's --parallel: the harness's default.
var fixtureParallel = harness.DefaultParallel(catalogue.Server)

// fixtureRun is the outcome of one suite run against a fixture.
type fixtureRun struct {
	stdout, stderr string
	code           int
	run            *report.Run
	err            error
	took           time.Duration
}

// TestE2EServerCatchesFixtures: against each broken fixture, started and
// restarted by the harness through --server-cmd with --strict, exactly the
// checks the fixture breaks do not pass, every other check of the run
// passes (all of them with the full matrix, see fullMatrix), and the run
// exits 1 (0 for a fixture that breaks only MAY checks).
// The runs use a binary built without the race detector, a bounded number
// at a time, longest-looking first.
func TestE2EServerCatchesFixtures(t *testing.T) {
	skipShort(t, "runs the whole suite against every fixture")
	t.Parallel()
	began := time.Now()
	// The stateless fixtures have a test of their own (below).
	// Those whose defects show only in 2026-07-28 are left to
	// TestE2EServerCatchesFixturesModern: here they are the reference.
	all := slices.DeleteFunc(servers.All(), func(f servers.Fixture) bool {
		return f.Stateless || (len(f.Breaks) == 0 && len(f.ModernBreaks) > 0)
	})
	order := slices.Clone(all)
	// Fixtures that break more checks tend to wait out more deadlines.
	slices.SortStableFunc(order, func(a, b servers.Fixture) int { return len(b.Breaks) - len(a.Breaks) })
	// A fixture that lacks a premise is run whole: what stands on the
	// premise must come out blocked, never failed.
	results := runFixtures(t, order, func(f servers.Fixture) []string {
		if len(f.Premises) > 0 || len(f.Skips) > 0 {
			return nil
		}
		return f.Breaks
	})
	for _, f := range all {
		t.Run(f.Name, func(t *testing.T) {
			checkFixtureRun(t, f, <-results[f.Name])
		})
	}
	t.Logf("%d fixtures in %v", len(all), time.Since(began).Round(time.Second))
}

// fullMatrix: with MCP_CONFORM_MATRIX=full (make test-matrix, which CI
// runs) each fixture run is the whole suite, so that every check is also
// seen to pass on each fixture that does not break it: the proof that no
// check fails falsely where another defect lies. Without it (make test) a
// run is focused on the checks the fixture breaks and those their
// premises rest on: each check is still seen to fail where it should, and
// to pass on the reference (TestE2EServerReference), in a fraction of the time.
var fullMatrix = os.Getenv("MCP_CONFORM_MATRIX") == "full"

// focusOn is the --focus flag of a fixture run that proves the checks ids
// (with the checks their premises rest on, and those whose premises rest
// on them, which the fixture may block: so a check added with DependsOn
// is seen blocked in make test, as in the full matrix); none when the
// matrix is full or ids is empty, for a fixture that breaks nothing: such
// a run is the whole suite.
func focusOn(ids []string) []string {
	if fullMatrix || len(ids) == 0 {
		return nil
	}
	return []string{"--focus", focusPattern(append(slices.Clone(ids), suites.Dependents(ids)...))}
}

// focusPattern is the --focus pattern that selects ids and the checks
// their premises rest on, and nothing else.
func focusPattern(ids []string) string {
	return "^(" + strings.Join(suites.WithPremises(ids), "|") + ")$"
}

// leftOut reports a check that a focused fixture run did not select.
func leftOut(c report.Check) bool {
	return !fullMatrix && c.Verdict == report.Skip && c.Cause == report.NotSelected
}

// runFixtures runs the server suite (with extra flags) against every
// fixture of order, in that order as fixturePool admits them, and returns
// each run's outcome by fixture name as it comes. Each run is focused on
// the checks proves names for its fixture (see fullMatrix).
func runFixtures(t *testing.T, order []servers.Fixture, proves func(servers.Fixture) []string, extra ...string) map[string]chan fixtureRun {
	t.Helper()
	exe := buildCLI(t)
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]chan fixtureRun{}
	for _, f := range order {
		results[f.Name] = make(chan fixtureRun, 1)
	}
	dir := t.TempDir()
	go func() {
		for _, f := range order {
			fixturePool <- struct{}{}
			go func() {
				defer func() { <-fixturePool }()
				results[f.Name] <- suiteAgainst(exe, profile, dir, f, append(slices.Clone(extra), focusOn(proves(f))...)...)
			}()
		}
	}()
	return results
}

// suiteAgainst runs the server suites against fixture f started by exe.
func suiteAgainst(exe, profile, dir string, f servers.Fixture, extra ...string) fixtureRun {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	js := filepath.Join(dir, f.Name+".json")
	// The fixtures speak both revisions, as the reference does; their
	// Breaks are of the sessions' era, and extra may choose another.
	args := append([]string{"server", "--protocol-version", wire.DefaultProtocolVersion,
		"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, f.Name),
		"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", profile, "--json", js, "--strict",
		"--parallel", strconv.Itoa(fixtureParallel)}, extra...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	began := time.Now()
	err := cmd.Run()
	r := fixtureRun{stdout: out.String(), stderr: errOut.String(), took: time.Since(began)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("no exit within %v", suiteTimeout)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.err = err
	}
	if r.err == nil {
		data, err := os.ReadFile(js)
		r.run = new(report.Run)
		if err == nil {
			err = json.Unmarshal(data, r.run)
		}
		if err != nil {
			r.err, r.run = fmt.Errorf("JSON report: %w", err), nil
		}
	}
	return r
}

// wantExit is the exit code of a --strict run against a fixture that
// breaks the checks breaks: 1 when one is then required, 0 when it breaks
// only MAY checks, which only inform.
func wantExit(breaks []string) int {
	for _, id := range breaks {
		if suites.MustLookup(id).Required(true) {
			return exitFail
		}
	}
	return exitOK
}

// TestE2EServerCatchesFixturesModern: the sessionless checks (the TASK-*
// checks' io.modelcontextprotocol/tasks variants, ORIGIN-403) under
// --protocol-version 2026-07-28 against every fixture whose defect can show
// there: exactly its ModernBreaks do not pass.
func TestE2EServerCatchesFixturesModern(t *testing.T) {
	skipShort(t, "runs the sessionless checks against fixtures")
	t.Parallel()
	var some []servers.Fixture
	for _, f := range servers.All() {
		if sessionlessDefect(f) {
			some = append(some, f)
		}
	}
	if len(some) == 0 {
		t.Fatal("no fixture breaks a sessionless check")
	}
	results := runFixtures(t, some, modernProves, "--protocol-version", "2026-07-28", "--suggest-profile", "")
	for _, f := range some {
		t.Run(f.Name, func(t *testing.T) {
			checkBreaks(t, f, f.ModernBreaks, <-results[f.Name], true)
		})
	}
}

// modernProves lists the checks a run of the sessionless revision against
// f proves: those it breaks there, and those it breaks in the other
// revision that run in this one too (which must pass here).
func modernProves(f servers.Fixture) []string {
	ids := slices.Clone(f.ModernBreaks)
	for _, id := range f.Breaks {
		if serverchecks.RunsInSessionlessRevision(id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// sessionlessDefect reports whether f's defect can show under the
// sessionless revision: it breaks a check there, or a check that has a
// sessionless variant. The other fixtures change only what sessions do
// (grace, re-initialize, GET streams, replay of a session's streams) or
// what the checks that begin with initialize see, which that revision
// does not have, so their runs would repeat the reference's.
func sessionlessDefect(f servers.Fixture) bool {
	if len(f.ModernBreaks) > 0 {
		return true
	}
	return slices.ContainsFunc(f.Breaks, serverchecks.RunsInSessionlessRevision)
}

// TestE2EServerCatchesStatelessFixtures: against each fixture that issues no
// session ids (a stateless 2025-11-25 server), started by the harness
// through --server-cmd with --strict, every catalogue Sessionless check
// runs and passes except the fixture's Breaks, which fail, and every other
// check is skipped as not applicable, never failed.
func TestE2EServerCatchesStatelessFixtures(t *testing.T) {
	skipShort(t, "runs the suite against the stateless fixtures")
	t.Parallel()
	var some []servers.Fixture
	for _, f := range servers.All() {
		if f.Stateless {
			some = append(some, f)
		}
	}
	if !slices.ContainsFunc(some, func(f servers.Fixture) bool { return len(f.Breaks) == 0 }) ||
		!slices.ContainsFunc(some, func(f servers.Fixture) bool { return len(f.Breaks) > 0 }) {
		t.Fatal("want a stateless fixture that breaks nothing and one that breaks a check")
	}
	results := runFixtures(t, some, func(f servers.Fixture) []string { return f.Breaks })
	for _, f := range some {
		t.Run(f.Name, func(t *testing.T) {
			r := <-results[f.Name]
			checkFixtureRun(t, f, r)
			if r.run == nil {
				return
			}
			var ran []string
			for _, c := range r.run.Checks {
				if c.Verdict != report.Skip {
					ran = append(ran, c.ID)
				}
			}
			t.Logf("%d of %d checks ran against a stateless target: %s", len(ran), len(r.run.Checks), strings.Join(ran, " "))
		})
	}
}

// checkFixtureRun compares a run's verdicts with what the fixture breaks.
func checkFixtureRun(t *testing.T, f servers.Fixture, r fixtureRun) {
	t.Helper()
	checkBreaks(t, f, f.Breaks, r, false)
}

// blockedOnPremise reports a check blocked by the root of the premise its
// failed step stood on, and by nothing else, where lacks(premise) says the
// fixture lacks that premise (lists it, or breaks its root).
func blockedOnPremise(c report.Check, lacks func(catalogue.Premise) bool) bool {
	p := catalogue.Premise(c.Premise)
	root := report.Check{ID: p.Root(), Revision: c.Revision}.Name()
	return p != "" && lacks(p) && slices.Equal(c.BlockedBy, []string{root})
}

// checkBreaks compares a run's verdicts with breaks: each must not pass,
// and fails on its own unless a check its premise rests on is broken too
// (then it may be blocked by that one); a check not in breaks passes,
// or is blocked by what its premise rests on when the fixture breaks
// that (suites.Blockable: derived, never listed). Skips are allowed
// where the revision leaves checks out.
func checkBreaks(t *testing.T, f servers.Fixture, breaks []string, r fixtureRun, skips bool) {
	t.Helper()
	var wrong []string
	if r.err != nil {
		wrong = append(wrong, r.err.Error())
	} else {
		if want := wantExit(breaks); r.code != want {
			wrong = append(wrong, fmt.Sprintf("exit %d, want %d", r.code, want))
		}
		for _, id := range breaks {
			if !slices.ContainsFunc(r.run.Checks, func(c report.Check) bool { return c.ID == id }) {
				wrong = append(wrong, id+" is not in the run")
			}
		}
		for _, c := range r.run.Checks {
			if leftOut(c) {
				continue
			}
			broken := slices.Contains(breaks, c.ID)
			// Blocked by a broken check its premise rests on, and by
			// nothing else: one defect, one failure.
			onBroken := c.Verdict == report.Blocked && suites.Blockable(c.ID, breaks) && blockedOnlyBy(c, breaks)
			e := suites.MustLookup(c.ID)
			inapplicable := f.Stateless && !e.Stateless && e.Revisions.Has(wire.Revision20251125)
			switch {
			case inapplicable && (c.Verdict != report.Skip || c.Cause != report.NoSessions):
				wrong = append(wrong, fmt.Sprintf("%s is %s (%s): against a stateless target it needs sessions, so it is not applicable", c.ID, c.Verdict, c.Message))
			case inapplicable:
			case broken && (c.Verdict == report.Pass || (skips && c.Verdict == report.Skip)):
				wrong = append(wrong, fmt.Sprintf("%s is %s: the check does not catch it", c.ID, c.Verdict))
			case broken && c.Verdict == report.Blocked && blockedOnPremise(c, func(p catalogue.Premise) bool { return slices.Contains(breaks, p.Root()) }):
				// Its failed step stood on a premise whose root the fixture
				// breaks too: one defect, one failure.
			case broken && onBroken:
			case broken && c.Verdict == report.Blocked:
				wrong = append(wrong, fmt.Sprintf("%s is blocked by %v, want a failure of its own: %s", c.ID, c.BlockedBy, c.Message))
			case !broken && c.Verdict == report.Blocked && blockedOnPremise(c, func(p catalogue.Premise) bool { return slices.Contains(f.Premises, p) }):
				// It stands on a premise the fixture lacks, whose root failed.
			case !broken && onBroken:
				// Its premise rests on a check the fixture breaks.
			case !broken && c.Verdict != report.Pass && suites.Blockable(c.ID, breaks) && brokenUnseen(r.run, c.ID, breaks):
				// What would have blocked it was not observed.
			case !broken && slices.Contains(f.Skips, c.ID) && c.Verdict != report.Skip:
				wrong = append(wrong, fmt.Sprintf("%s is %s, want skip: the fixture leaves it nothing to judge by a legal choice: %s", c.ID, c.Verdict, c.Message))
			case !broken && slices.Contains(f.Skips, c.ID):
			case !broken && c.Verdict == report.Skip && len(f.Premises) > 0:
				// What a missing premise leaves unobservable skips, saying so.
			case !broken && c.Verdict == report.Skip && skips:
			case !broken && c.Verdict == report.Fail && f.ExpiresHeldSessions && strings.HasPrefix(c.Message, serverchecks.SessionLost):
			case !broken && c.Verdict != report.Pass && !skipsByDesign(c):
				wrong = append(wrong, fmt.Sprintf("%s is %s, but the fixture does not break it: %s", c.ID, c.Verdict, c.Message))
			}
		}
	}
	if r.err == nil && len(f.Premises) > 0 {
		// One defect, one failure: what stands on a missing premise is
		// not counted again; every root cause is a check the fixture
		// breaks on its own.
		for _, root := range r.run.RootCauses {
			id, _, _ := strings.Cut(root, "@")
			if !slices.Contains(breaks, id) {
				wrong = append(wrong, fmt.Sprintf("%s counted as a distinct defect (%d in all: %v); the fixture lacks %v, whose checks must be blocked by its root", root, r.run.Defects, r.run.RootCauses, f.Premises))
			}
		}
	}
	if len(wrong) > 0 {
		t.Errorf("fixture %s (%s), run took %v:\n  %s\nconsole:\n%s\nstderr:\n%s",
			f.Name, f.About, r.took.Round(time.Second), strings.Join(wrong, "\n  "), r.stdout, r.stderr)
	}
}

// brokenUnseen reports whether a broken check that id's premise rests
// on was not seen to fail in the run (inconclusive on a busy machine):
// then id, not blocked by it, may fail on its own.
func brokenUnseen(r *report.Run, id string, breaks []string) bool {
	for _, p := range suites.Premises(id) {
		for _, c := range r.Checks {
			if c.ID == p && slices.Contains(breaks, p) && !c.Verdict.Defect() && c.Verdict != report.Blocked {
				return true
			}
		}
	}
	return false
}

// expectAllPass checks that the report holds every check of side, each
// passed, and returns their IDs.
func expectAllPass(t *testing.T, r *report.Run, side catalogue.Side) []string {
	t.Helper()
	var ids []string
	for _, c := range r.Checks {
		ids = append(ids, c.ID)
		if c.Verdict != report.Pass && !skipsByDesign(c) {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Message)
		}
	}
	if want := suites.IDs(side); !slices.Equal(slices.Compact(sorted(ids)), want) {
		t.Errorf("checks in report:\n%v\nwant every %s ID:\n%v", sorted(ids), side, want)
	}
	return ids
}

// skipsByDesign reports a check that skips in any run like this one: a
// replica check without --replica-url, or a check of the sessionless
// revision in a run of an earlier one.
func skipsByDesign(c report.Check) bool {
	return skipsForReplicas(c) || (c.Verdict == report.Skip && (c.Cause == report.OtherRevision || c.Cause == report.NeedsBrowser))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// checkFixture runs the server checks against fixture name, started by a
// built binary, with profile, expects exit code want, and returns the
// JSON report and the console output.
func checkFixture(t *testing.T, name, profile string, want int, args ...string) (*report.Run, string) {
	t.Helper()
	exe := buildCLI(t)
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runSelf(t, suiteTimeout, append([]string{"server", "--protocol-version", wire.DefaultProtocolVersion,
		"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, name),
		"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", profile, "--json", js}, args...)...)
	if code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	return readRun(t, js), out
}

// boundedRun bounds TestE2EFailingWaitsAreBounded's whole run: generous, about
// three times what it takes on two cores. A run whose failing waits each
// ran into a blanket 30 s deadline takes minutes.
const boundedRun = 45 * time.Second

// TestE2EFailingWaitsAreBounded: against a server that swallows the
// notifications of a cut call, with a notifying tool of 5 x 500 ms, the
// checks that wait for them fail within their deadline (twice what the
// profile says they need, plus a margin), say what they waited for and how
// long, and the whole run ends well within boundedRun.
func TestE2EFailingWaitsAreBounded(t *testing.T) {
	skipShort(t, "runs the whole suite against a fixture")
	t.Parallel()
	began := time.Now()
	r, out := checkFixture(t, "orphaned-notifications-dropped", "testdata/slow-notifying.yaml", exitFail)
	took := time.Since(began)
	for _, c := range r.Checks {
		switch {
		case c.ID == "REPLAY-GAP" && (c.Verdict != report.Fail || !strings.HasPrefix(c.Message, "waited ") || !strings.Contains(c.Message, "in vain")):
			t.Errorf("%s: %s %q; want a failure that says what it waited for and how long", c.ID, c.Verdict, c.Message)
		case c.ID == "REDIRECT-ORPHANED" && (c.Verdict != report.Fail || !strings.Contains(c.Message, "by stream: ")):
			t.Errorf("%s: %s %q; want a failure that says which notification came on which stream", c.ID, c.Verdict, c.Message)
		}
	}
	if took > boundedRun {
		t.Errorf("the run took %v, more than %v\n%s", took.Round(time.Second), boundedRun, out)
	}
}

// TestE2ESessionLostMidCheck: against a server that reaps a session whose
// client only listens on a GET stream 800ms after its last POST,
// REDIRECT-NO-RESPONSE (silent on the wire for longer than that) passes
// when the profile declares an idle threshold, because the check keeps its
// session warm; with none declared it cannot, and its failure names the
// expiry first, not the refused resume that followed from it.
func TestE2ESessionLostMidCheck(t *testing.T) {
	skipShort(t, "runs a check against a fixture twice")
	t.Parallel()
	const focus = "^REDIRECT-NO-RESPONSE:"
	r, _ := checkFixture(t, "reaped-while-listening", "../../fixtures/profile.yaml", exitOK, "--focus", focus)
	if c := checkIn(t, r, "REDIRECT-NO-RESPONSE"); c.Verdict != report.Pass {
		t.Errorf("kept warm: %s %q, want pass", c.Verdict, c.Message)
	}
	r, _ = checkFixture(t, "reaped-while-listening", "testdata/no-idle.yaml", exitFail, "--focus", focus)
	if c := checkIn(t, r, "REDIRECT-NO-RESPONSE"); c.Verdict != report.Fail ||
		!strings.HasPrefix(c.Message, serverchecks.SessionLost+": tools/list on it got 404") || !strings.Contains(c.Message, "could not keep it warm") {
		t.Errorf("not kept warm: %s %q, want a failure that names the expiry first", c.Verdict, c.Message)
	}
}

// checkIn returns the verdict of check id in r.
func checkIn(t *testing.T, r *report.Run, id string) report.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no %s in the report", id)
	return report.Check{}
}

// TestE2EZeroGracePeriod: a profile that declares grace_period: 0s, against a
// server with an idle TTL alone: the two checks about the grace period
// skip and say why; every other check, GRACE-EXPIRES included, passes.
func TestE2EZeroGracePeriod(t *testing.T) {
	skipShort(t, "runs the whole suite against a fixture")
	t.Parallel()
	r, _ := checkFixture(t, "no-grace-period", "testdata/no-grace.yaml", exitOK, "--strict")
	for _, c := range r.Checks {
		skip := c.ID == "GRACE-IDLE-SURVIVES" || c.ID == "GRACE-RECONNECT-CANCELS"
		switch {
		case skip && (c.Verdict != report.Skip || !strings.Contains(c.Message, "no grace period")):
			t.Errorf("%s: %s %q, want a skip saying the target declares no grace period", c.ID, c.Verdict, c.Message)
		case !skip && c.Verdict != report.Pass && !skipsByDesign(c):
			t.Errorf("%s: %s %q, want pass", c.ID, c.Verdict, c.Message)
		}
	}
}

// TestE2ENoToolChecks: with no notifying tool declared, GET-NO-RESPONSES,
// EVT-ID-UNIQUE and SSE-PRIMING run on ping and tools/list instead (and
// GET-PRIMED needs no tool), and
// still catch the fixtures that break them (TestProfileCommand has them
// pass on the reference with no profile).
func TestE2ENoToolChecks(t *testing.T) {
	skipShort(t, "runs checks against fixtures")
	t.Parallel()
	noTool := []string{"GET-NO-RESPONSES", "EVT-ID-UNIQUE", "SSE-PRIMING", "GET-PRIMED"}
	for fixture, broken := range map[string]string{"responses-copied-to-get": "GET-NO-RESPONSES", "post-priming-id-reused": "EVT-ID-UNIQUE", "post-streams-unprimed": "SSE-PRIMING", "get-streams-unprimed": "GET-PRIMED"} {
		r, _ := checkFixture(t, fixture, "testdata/tokens-only.yaml", wantExit([]string{broken}),
			"--strict", "--focus", "^("+strings.Join(noTool, "|")+"):")
		for _, c := range r.Checks {
			switch {
			case c.ID == broken && c.Verdict != report.Fail:
				t.Errorf("%s on %s with no tool declared: %s %q, want fail", c.ID, fixture, c.Verdict, c.Message)
			case c.ID != broken && slices.Contains(noTool, c.ID) && c.Verdict != report.Pass:
				t.Errorf("%s on %s with no tool declared: %s %q, want pass", c.ID, fixture, c.Verdict, c.Message)
			}
		}
	}
}

// blockedOnlyBy reports whether every check c is blocked by is one of
// breaks (at any revision).
func blockedOnlyBy(c report.Check, breaks []string) bool {
	for _, by := range c.BlockedBy {
		if id, _, _ := strings.Cut(by, "@"); !slices.Contains(breaks, id) {
			return false
		}
	}
	return len(c.BlockedBy) > 0
}
