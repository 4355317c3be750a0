package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harness.Options
	fs.StringVar(&o.URL, "url", "", "MCP endpoint to check; empty starts the embedded reference server")
	checks := fs.String("checks", string(catalogue.CheckSetAll), "the check set to run: spec (the specification's levels), resilience (RES) or all")
	renameFlag(fs, "profile", "checks")
	fs.BoolVar(&o.Strict, "strict", false, "failed SHOULD checks fail the run (default: warnings)")
	fs.StringVar(&o.TargetProfile, "target-profile", "", "target profile file (YAML or JSON) declaring the server's tools, timings, principals and origins")
	renameFlag(fs, "target-config", "target-profile")
	fs.StringVar(&o.ServerCmd, "server-cmd", "", "command that starts the target, with {port} for a free port (also in --url); enables restart checks")
	fs.DurationVar(&o.ServerStartTimeout, "server-start-timeout", 30*time.Second, "how long a --server-cmd target may take to answer")
	fs.StringVar(&o.JUnit, "junit", "", "write a JUnit XML report to this file")
	fs.StringVar(&o.JSON, "json", "", "write a JSON report to this file")
	fs.StringVar(&o.HTML, "html", "", "write a self-contained HTML report, with a timeline per check, to this file")
	fs.StringVar(&o.Markdown, "markdown", "", "write a Markdown report for a GitHub job summary or pull-request comment to this file")
	fs.StringVar(&o.Badge, "badge", "", "write a shields.io endpoint badge (JSON: checks passed by level, coloured by whether every required check passed) to this file")
	fs.StringVar(&o.DocsBase, "docs-url", "", "URL that the Markdown report's links to this project's documents start with, e.g. https://github.com/OWNER/mcp-conform/blob/REF/ (default: relative links)")
	fs.StringVar(&o.LabelFilter, "label-filter", "", "label expression (Ginkgo syntax) over the checks' side, section, check set and level, e.g. 'sessions || grace' or '!resilience'")
	fs.StringVar(&o.Focus, "focus", "", "run only checks whose name matches this regexp, e.g. '^GRACE-' or '^GRACE-EXPIRES$' (matched against the ID and \"ID: summary\")")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", harness.DiscoverRevisions, "protocol revision to check: 'auto' (those the target speaks, asked with initialize and server/discover; both make a run of each, as 'all'), one (offered in initialize; "+wire.SessionlessProtocolVersion+" has none), 'all' ("+wire.DefaultProtocolVersion+" and "+wire.SessionlessProtocolVersion+" in one run, each check named ID@revision) or a comma-separated list")
	fs.StringVar(&o.SuggestProfile, "suggest-profile", defaultSuggestion, "when checks skip for want of a target-profile key, write a profile to edit here ('' for nowhere)")
	var replicas stringList
	fs.Var(&replicas, "replica-url", "MCP endpoint of another replica of the --url deployment (repeatable); enables the replica checks")
	fs.BoolVar(&o.NoProxy, "no-proxy", false, "talk to the target directly; checks that inject network faults are skipped")
	fs.BoolVar(&o.FollowRedirects, "follow-redirects", false, "follow the target's redirects within its origin (scheme, host and port); without it a redirect is a setup error, and a redirect to another origin always is")
	expected := fs.String("expected-failures", "", "baseline file of check IDs allowed to fail (one per line, # comments; ID@revision for one revision of a run)")
	fs.DurationVar(&o.Timeout, "timeout", harness.DefaultTimeout, "bound on the whole run")
	fs.IntVar(&o.Parallel, "parallel", harness.DefaultParallel(catalogue.Server), "how many checks run at once (default: five per core; the exclusive checks, RUNS alone in mcp-conform list, run alone); 1 runs them one after another")
	fs.BoolVar(&o.Verbose, "v", false, "verbose: print every check's exchange log to stderr as it finishes")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: mcp-conform server [flags]

Checks an MCP Streamable HTTP server against the behaviour catalogue
('mcp-conform list'), injecting network faults through an embedded proxy.
Without --url it checks the embedded reference server.

Exit status: 0 all required checks passed, 1 a required check failed,
2 usage or setup error (bad flag, unreachable or non-MCP URL, a redirect,
a target that stopped answering during the run).

flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := parallelFlag(o.Parallel); err != nil {
		return err
	}
	if err := explicitDir(fs, "suggest-profile", o.SuggestProfile); err != nil {
		return err
	}
	o.Checks = catalogue.CheckSet(*checks)
	o.ReplicaURLs = replicas
	ef, err := loadExpected(*expected)
	if err != nil {
		return err
	}
	o.ExpectedFailures = ef
	return verdict(harness.Run(ctx, o, stdout, stderr))
}

// loadExpected reads an --expected-failures baseline, if one is given.
func loadExpected(path string) (map[string]bool, error) {
	if path == "" {
		return nil, nil
	}
	ef, err := harness.LoadExpectedFailures(path)
	if err != nil {
		return nil, usageError(err)
	}
	return ef, nil
}

// verdict turns a run's outcome into the command's: a setup error exits 2,
// a failed required check 1.
func verdict(run *report.Run, err error) error {
	if se := new(harness.SetupError); errors.As(err, &se) {
		return usageError(se)
	}
	if err != nil {
		return err
	}
	if !run.Passed {
		return fmt.Errorf("%d required checks failed", run.Counts[report.Fail]+run.Counts[report.Stale])
	}
	return nil
}
