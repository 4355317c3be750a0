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

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// Common are the settings both modes share.
type Common struct {
	// JUnit, JSON, HTML and Markdown are report paths; empty for none.
	JUnit, JSON, HTML, Markdown string
	// Badge is where a shields.io endpoint badge of the run goes; empty
	// for none.
	Badge string
	// DocsBase is prepended to the project's own references in the
	// Markdown report (docs/resilience.md#…); empty leaves them relative.
	DocsBase string
	// ExpectedFailures are check IDs allowed to fail (a baseline).
	ExpectedFailures map[string]bool
	// Parallel is how many checks run at once (exclusive ones run alone);
	// 1 runs them one after another. 0 means DefaultParallel of the side.
	Parallel int
	// Verbose prints every check's exchange log to stderr as it finishes.
	Verbose bool
	// Timeout bounds the whole run.
	Timeout time.Duration
}

// Options are the settings of a server-mode run.
type Options struct {
	Common
	// URL of the target; empty runs against the embedded reference server.
	URL string
	// Checks selects the check set: spec, resilience or all.
	Checks catalogue.CheckSet
	// Strict makes failed SHOULD checks fail the run.
	Strict bool
	// TargetProfile is the path of the target profile file, if any.
	TargetProfile string
	// ServerCmd starts (and restarts) the target; {port} is replaced by a free port.
	ServerCmd string
	// ServerStartTimeout bounds how long a --server-cmd target takes to answer.
	ServerStartTimeout time.Duration
	// LabelFilter is a label expression over the checks' labels (Ginkgo's
	// syntax); Focus is a regexp over "ID: summary".
	LabelFilter, Focus string
	// ProtocolVersion is the revision the checks speak (offered in
	// initialize), or several: "all" (AllRevisions) or a comma-separated
	// list, each checked with the checks that exist at it, in one run;
	// or "auto" (DiscoverRevisions, the CLI's default): those the target
	// speaks. Empty is wire.DefaultProtocolVersion.
	ProtocolVersion string
	// revisions are ProtocolVersion's, parsed by validate; with
	// DiscoverRevisions, those the target speaks once probed.
	revisions []string
	// discover: ProtocolVersion is DiscoverRevisions.
	discover bool
	// downgraded says how discovery found a newer revision with sessions
	// than the one the target first negotiated; "" when it did not.
	downgraded string
	// NoProxy sends requests straight to the target (fault checks are skipped).
	NoProxy bool
	// ReplicaURLs are the endpoints of the target's other replicas; the
	// replica checks skip without them.
	ReplicaURLs []string
	// SuggestProfile is where a suggested target profile is written when
	// checks were skipped for want of a profile key; empty for nowhere. A
	// path whose directory does not exist gets a note instead.
	SuggestProfile string
	// FollowRedirects follows the target's redirects within its origin
	// (scheme, host and port); without it a redirect is a setup error. A
	// redirect to another origin is never followed.
	FollowRedirects bool
	// Liveness tunes the watcher that ends the run when the target stops
	// answering; its zero value is the defaults (see probeEvery).
	Liveness LivenessProbes
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

// suggestVersion is the revision to list the target's tools at: the
// first of the sessions' era it speaks (tools/list follows initialize).
func suggestVersion(versions []string) string {
	for _, v := range versions {
		if !wire.Revision(v).Sessionless() {
			return v
		}
	}
	return versions[0]
}

// suggest says how many checks each missing profile key would enable and
// writes a suggested profile to edit.
func (o *Options) suggest(ctx context.Context, run *report.Run, version string, cfg *target.Profile, restartable bool, stdout io.Writer) {
	missing := missingKeys(run.Checks, cfg.Has, restartable, len(o.ReplicaURLs) > 0)
	if missing.total() == 0 {
		return
	}
	fmt.Fprintf(stdout, "\n%s", missing)
	switch dir := filepath.Dir(o.SuggestProfile); {
	case o.SuggestProfile == "":
		fmt.Fprintln(stdout, "Write a profile to edit with --suggest-profile FILE, or 'mcp-conform profile --url URL'.")
		return
	case !isDir(dir):
		fmt.Fprintf(stdout, "No suggested profile written: directory %s does not exist (--suggest-profile FILE).\n", dir)
		return
	}
	tools, err := listTools(ctx, o.URL, version, cfg)
	if err != nil {
		fmt.Fprintf(stdout, "No suggested profile written: %v\n", err)
		return
	}
	if err := WriteFile(o.SuggestProfile, []byte(suggestedProfile(o.URL, tools, missing, time.Now())), 0o644, true); err != nil {
		fmt.Fprintf(stdout, "No suggested profile written: %v\n", err)
		return
	}
	fmt.Fprintf(stdout, wroteProfile, o.SuggestProfile)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// marginFor is the deadline margin for a target whose round trip took
// rtt: DefaultMargin plus room for a few dozen round trips, at most 40s.
func marginFor(rtt time.Duration) time.Duration {
	return min(DefaultMargin+20*rtt, 40*time.Second)
}

// engine is the check engine for these settings.
func (c *Common) engine(strict bool, margin time.Duration, stdout, stderr io.Writer) *engine {
	en := &engine{parallel: c.Parallel, margin: margin, strict: strict, expected: c.ExpectedFailures, progress: stdout}
	if c.Verbose {
		en.verbose = stderr
	}
	return en
}

// finish runs the selected checks under the run's timeout, completes the
// run's report, prints the summary and writes the report files.
func (c *Common) finish(ctx context.Context, run *report.Run, en *engine, jobs []job, selected func(job) bool, stdout io.Writer) (*report.Run, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.Timeout, fmt.Errorf("the run's --timeout of %v passed", c.Timeout))
	defer cancel()
	run.Started = time.Now()
	run.Checks = en.runJobs(ctx, jobs, selected)
	run.Seconds = time.Since(run.Started).Seconds()
	run.Finish()
	if report.CountUnselected(run.Checks) == len(run.Checks) {
		return nil, setupErr("no checks selected: the profile, --label-filter, --focus or --scenario leave nothing to run")
	}
	report.WriteSummary(stdout, run, true)
	if err := c.writeReports(run); err != nil {
		return run, err
	}
	return run, nil
}

// validate checks the shared settings and fills in their defaults.
func (c *Common) validate(side catalogue.Side) error {
	if c.Parallel < 0 {
		return setupErr("--parallel must be 1 or more, got %d", c.Parallel)
	}
	if c.Parallel == 0 { // the zero value of a library caller's options
		c.Parallel = DefaultParallel(side)
	}
	if unknown := unknownIDs(side, c.ExpectedFailures); len(unknown) > 0 {
		return setupErr("--expected-failures names IDs that are not %s checks: %s", side, idList(unknown))
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return checkReportDirs(c.JUnit, c.JSON, c.HTML, c.Markdown, c.Badge)
}

func (o *Options) validate() error {
	switch o.Checks {
	case catalogue.CheckSetSpec, catalogue.CheckSetResilience, catalogue.CheckSetAll:
	case "":
		o.Checks = catalogue.CheckSetAll
	default:
		return setupErr("--checks must be spec, resilience or all, got %q", o.Checks)
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = wire.DefaultProtocolVersion
	}
	revs, err := parseRevisions(o.ProtocolVersion)
	if err != nil {
		return err
	}
	o.revisions, o.discover = revs, o.ProtocolVersion == DiscoverRevisions
	if len(revs) == 1 {
		o.ProtocolVersion = revs[0]
	}
	if o.URL != "" {
		u, err := url.Parse(strings.ReplaceAll(o.URL, "{port}", "1"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return setupErr("--url must be an http:// or https:// URL, got %q", o.URL)
		}
	}
	for _, r := range o.ReplicaURLs {
		if o.URL == "" {
			return setupErr("--replica-url needs --url: the embedded reference server is one replica")
		}
		if u, err := url.Parse(r); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return setupErr("--replica-url must be an http:// or https:// URL, got %q", r)
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
		if !slices.ContainsFunc(o.allJobs(), func(j job) bool { return o.focused(re, j) }) {
			return setupErr("--focus %q matches no server check (it is matched against the ID and against \"ID: summary\"%s)", o.Focus, map[bool]string{true: ", and against ID@revision"}[o.multi()])
		}
	}
	if err := o.Common.validate(catalogue.Server); err != nil {
		return err
	}
	return expectedAtRevisions(o.ExpectedFailures)
}

// expectedAtRevisions refuses a baseline entry ID@revision for a check
// that does not exist at that revision: it could never match.
func expectedAtRevisions(ef map[string]bool) error {
	var wrong []string
	for key := range ef {
		if id, rev, at := strings.Cut(key, "@"); at && !appliesAt(id, rev) {
			wrong = append(wrong, key)
		}
	}
	if len(wrong) > 0 {
		slices.Sort(wrong)
		return setupErr("--expected-failures names checks at a revision where they do not run: %s", idList(wrong))
	}
	return nil
}

// jobSelector selects the checks of the run as selector does, --focus
// matching a check's name at its revision (ID@revision) too in a run of
// several.
func (o *Options) jobSelector() func(job) bool {
	selected := o.selector()
	if o.Focus == "" || !o.multi() {
		return func(j job) bool { return selected(j.Entry) }
	}
	re := regexp.MustCompile(o.Focus)
	unfocused := *o
	unfocused.Focus = ""
	rest := unfocused.selector()
	return func(j job) bool { return rest(j.Entry) && o.focused(re, j) }
}

// focused reports whether --focus re names job j: its ID, "ID: summary",
// and in a run of several revisions "ID@revision" and "ID@revision:
// summary".
func (o *Options) focused(re *regexp.Regexp, j job) bool {
	return j.Entry.Matches(re) || (j.revision != "" && (re.MatchString(j.name()) || re.MatchString(j.name()+": "+j.Entry.Summary)))
}

// allJobs are the run's checks at each of its revisions, unbound.
func (o *Options) allJobs() []job {
	var out []job
	for _, rev := range o.revisions {
		label := ""
		if o.multi() {
			label = rev
		}
		for _, e := range suites.Of(catalogue.Server) {
			if !o.multi() || appliesAt(e.ID, rev) {
				out = append(out, job{Check: kit.Check{Entry: e}, revision: label})
			}
		}
	}
	return out
}

// selector selects the server checks of the profile, narrowed by
// --label-filter and --focus (both validated already).
func (o *Options) selector() func(catalogue.Entry) bool {
	var labels func([]string) bool
	if o.LabelFilter != "" {
		labels, _ = types.ParseLabelFilter(o.LabelFilter)
	}
	var focus func(catalogue.Entry) bool
	if o.Focus != "" {
		re := regexp.MustCompile(o.Focus)
		focus = func(e catalogue.Entry) bool { return e.Matches(re) }
	}
	return selector(catalogue.Server, o.Checks, labels, focus)
}

func (o *Options) targetConfig() (*target.Profile, error) {
	switch {
	case o.TargetProfile != "":
		return target.Load(o.TargetProfile)
	case o.URL == "":
		return ReferenceProfile(), nil
	}
	return &target.Profile{}, nil
}

func (c *Common) writeReports(run *report.Run) error {
	write := func(path string, f func(io.Writer, *report.Run) error) error {
		if path == "" {
			return nil
		}
		return report.WriteFile(path, func(w io.Writer) error { return f(w, run) })
	}
	if err := write(c.JUnit, report.WriteJUnit); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := write(c.JSON, report.WriteJSON); err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	if err := write(c.HTML, report.WriteHTML); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	markdown := func(w io.Writer, r *report.Run) error { return report.WriteMarkdown(w, r, c.DocsBase) }
	if err := write(c.Markdown, markdown); err != nil {
		return fmt.Errorf("--markdown: %w", err)
	}
	if err := write(c.Badge, report.WriteBadge); err != nil {
		return fmt.Errorf("--badge: %w", err)
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
