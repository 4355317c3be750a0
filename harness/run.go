package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// Options are the settings of a server-mode run.
type Options struct {
	// URL of the target; empty runs against the embedded reference server.
	URL string
	// Profile selects spec, resilience or all checks.
	Profile catalogue.Profile
	// Strict makes failed SHOULD checks fail the run.
	Strict bool
	// TargetConfig is the path of the target profile file, if any.
	TargetConfig string
	// ServerCmd starts (and restarts) the target; {port} is replaced by a free port.
	ServerCmd string
	// ServerStartTimeout bounds how long a --server-cmd target takes to answer.
	ServerStartTimeout time.Duration
	// JUnit and JSON are report paths; empty for none.
	JUnit, JSON string
	// LabelFilter and Focus narrow the checks (Ginkgo syntax; Focus is a regexp).
	LabelFilter, Focus string
	// ProtocolVersion is offered in initialize.
	ProtocolVersion string
	// NoProxy sends requests straight to the target (fault checks are skipped).
	NoProxy bool
	// Verbose prints Ginkgo's own output and every failed exchange.
	Verbose bool
	// ExpectedFailures are check IDs allowed to fail (a baseline).
	ExpectedFailures map[string]bool
	// Timeout bounds the whole run.
	Timeout time.Duration
}

// SetupError is a problem with the options or the target that prevents a
// run: the CLI exits 2 for it.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func setupErr(format string, args ...any) error {
	return &SetupError{fmt.Errorf(format, args...)}
}

// DefaultTimeout bounds a whole run.
const DefaultTimeout = 30 * time.Minute

// restarter is a target the harness can restart.
type restarter interface {
	Restart(context.Context) error
	Close()
}

// Run runs the server suites once and returns the result; the console
// progress and summary go to stdout. A run can happen once per process
// (a Ginkgo constraint); the CLI calls it once.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (*report.Run, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	cfg, err := o.targetConfig()
	if err != nil {
		return nil, &SetupError{err}
	}
	var managed restarter
	switch {
	case o.URL == "":
		rt, err := startReference(stderr)
		if err != nil {
			return nil, &SetupError{err}
		}
		managed, o.URL = rt, rt.URL()
	case o.ServerCmd != "":
		p, err := startProcess(ctx, o.ServerCmd, o.URL, o.ServerStartTimeout)
		if err != nil {
			return nil, &SetupError{err}
		}
		managed, o.URL = p, p.url
	}
	if managed != nil {
		defer managed.Close()
	}
	pr, err := preflight(ctx, o.URL, o.ProtocolVersion, cfg)
	if err != nil {
		return nil, &SetupError{err}
	}
	tc := suites.TargetContext{URL: o.URL, Config: cfg, ProtocolVersion: pr.version, Sessionless: pr.sessionless}
	if managed != nil {
		tc.Restart = managed.Restart
	}
	if !o.NoProxy {
		tc.Toxics = toxics.NewServer()
		defer tc.Toxics.Close()
	}
	if pr.version != o.ProtocolVersion {
		fmt.Fprintf(stdout, "note: offered protocol %s, the target negotiated %s\n", o.ProtocolVersion, pr.version)
	}
	if pr.sessionless != "" {
		fmt.Fprintf(stdout, "note: session, GET and replay checks are not applicable: %s\n", pr.sessionless)
	}
	fmt.Fprintf(stdout, "mcp-conform server: checking %s (profile %s)\n", o.URL, o.Profile)

	started := time.Now()
	rep, err := runSpecs(o, tc, stdout, stderr)
	if err != nil {
		return nil, err
	}
	run := &report.Run{
		Tool: "mcp-conform", Mode: "server", Target: o.URL, Profile: string(o.Profile),
		ProtocolVersion: pr.version, Strict: o.Strict, Started: started,
		Seconds: time.Since(started).Seconds(),
		Checks:  checks(rep, o.Strict, o.ExpectedFailures),
	}
	run.Finish()
	if ran := len(run.Checks) - countNotSelected(run.Checks); ran == 0 {
		return nil, setupErr("no checks selected: --profile %s, --label-filter %q and --focus %q leave nothing to run", o.Profile, o.LabelFilter, o.Focus)
	}
	report.WriteSummary(stdout, run, true)
	if err := writeReports(o, run); err != nil {
		return run, err
	}
	return run, nil
}

// ginkgoT lets RunSpecs run outside go test.
type ginkgoT struct{ failed bool }

func (t *ginkgoT) Fail() { t.failed = true }

func runSpecs(o Options, tc suites.TargetContext, stdout, stderr io.Writer) (*types.Report, error) {
	suites.TestContext = tc
	gomega.RegisterFailHandler(ginkgo.Fail)
	sc, rc := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = o.labelFilter()
	if o.Focus != "" {
		sc.FocusStrings = []string{focusIDs(catalogue.Server, o.Focus)}
	}
	sc.Timeout = o.Timeout
	sc.RandomSeed = 1 // catalogue order, every run alike
	rc.NoColor = true
	// Ginkgo's own reporter speaks of specs, not of verdicts by level; the
	// harness prints its own progress and keeps Ginkgo's output for -v.
	formatter.ColorableStdOut = io.Discard
	if o.Verbose {
		formatter.ColorableStdOut = stderr
		rc.Verbose = true
	}
	n := 0
	suites.OnCheck = func(s types.SpecReport) {
		c := check(s, o.Strict, o.ExpectedFailures)
		if c.Verdict == report.Skip && c.Message == report.NotSelected() {
			return
		}
		n++
		fmt.Fprintln(stdout, report.ProgressLine(n, suites.TestContext.Total, c))
	}
	ginkgo.RunSpecs(&ginkgoT{}, "mcp-conform server", sc, rc)
	rep := suites.LastReport()
	if rep == nil {
		return nil, errors.New("the suite produced no report")
	}
	return rep, nil
}

func (o *Options) validate() error {
	switch o.Profile {
	case catalogue.ProfileSpec, catalogue.ProfileResilience, catalogue.ProfileAll:
	case "":
		o.Profile = catalogue.ProfileAll
	default:
		return setupErr("--profile must be spec, resilience or all, got %q", o.Profile)
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = wire.DefaultProtocolVersion
	}
	if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(o.ProtocolVersion) {
		return setupErr("--protocol-version must look like 2025-11-25, got %q", o.ProtocolVersion)
	}
	if o.URL != "" {
		u, err := url.Parse(strings.ReplaceAll(o.URL, "{port}", "1"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return setupErr("--url must be an http:// or https:// URL, got %q", o.URL)
		}
	}
	if o.ServerCmd != "" {
		if o.URL == "" {
			return setupErr("--server-cmd needs --url, e.g. --server-cmd 'my-server --port {port}' --url http://127.0.0.1:{port}/mcp")
		}
		if strings.Contains(o.ServerCmd, "{port}") != strings.Contains(o.URL, "{port}") {
			return setupErr("--server-cmd and --url must both use {port}, or neither")
		}
	} else if strings.Contains(o.URL, "{port}") {
		return setupErr("--url contains {port} but no --server-cmd is given")
	}
	if o.ServerStartTimeout <= 0 {
		o.ServerStartTimeout = 30 * time.Second
	}
	if o.LabelFilter != "" {
		if _, err := types.ParseLabelFilter(o.LabelFilter); err != nil {
			if ge := (types.GinkgoError{}); errors.As(err, &ge) {
				return setupErr("--label-filter %q: %s: %s", o.LabelFilter, ge.Heading, strings.Join(strings.Fields(ge.Message), " "))
			}
			return setupErr("--label-filter: %v", err)
		}
	}
	if o.Focus != "" {
		re, err := regexp.Compile(o.Focus)
		if err != nil {
			return setupErr("--focus: %v", err)
		}
		if !slices.ContainsFunc(catalogue.All(), func(e catalogue.Entry) bool { return e.Side == catalogue.Server && re.MatchString(e.ID+": "+e.Summary) }) {
			return setupErr("--focus %q matches no server check (it is matched against \"ID: summary\")", o.Focus)
		}
	}
	if unknown := unknownExpected(o.ExpectedFailures); len(unknown) > 0 {
		return setupErr("--expected-failures names IDs that are not server checks: %s", strings.Join(unknown, ", "))
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return checkReportDirs(o.JUnit, o.JSON)
}

// focusIDs turns --focus, a regexp over "ID: summary", into a Ginkgo focus
// on exactly the matching checks (Ginkgo would match the regexp against the
// spec's full text, container included, so '^GRACE-' would select nothing).
func focusIDs(side catalogue.Side, focus string) string {
	re := regexp.MustCompile(focus)
	var ids []string
	for _, e := range catalogue.All() {
		if e.Side == side && re.MatchString(e.ID+": "+e.Summary) {
			ids = append(ids, regexp.QuoteMeta(e.ID))
		}
	}
	return "(^| )(" + strings.Join(ids, "|") + "): "
}

// labelFilter selects server checks of the profile, narrowed by --label-filter.
func (o *Options) labelFilter() string {
	f := string(catalogue.Server)
	if o.Profile != catalogue.ProfileAll {
		f += " && " + string(o.Profile)
	}
	if o.LabelFilter != "" {
		f += " && (" + o.LabelFilter + ")"
	}
	return f
}

func (o *Options) targetConfig() (*target.Config, error) {
	switch {
	case o.TargetConfig != "":
		return target.Load(o.TargetConfig)
	case o.URL == "":
		return ReferenceProfile(), nil
	}
	return &target.Config{}, nil
}

func writeReports(o Options, run *report.Run) error {
	write := func(path string, f func(io.Writer, *report.Run) error) error {
		if path == "" {
			return nil
		}
		file, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(file, run); err != nil {
			file.Close()
			return err
		}
		return file.Close()
	}
	if err := write(o.JUnit, report.WriteJUnit); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := write(o.JSON, report.WriteJSON); err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	return nil
}

// checkReportDirs makes sure report files can be created before a run, so a
// typo in a path does not cost a whole run.
func checkReportDirs(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if dir := filepath.Dir(p); dir != "." {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return setupErr("report directory %s does not exist", dir)
			}
		}
	}
	return nil
}
