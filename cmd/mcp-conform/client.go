package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
)

const clientUsage = `usage: mcp-conform client [--command CMD | --browser [PAGE_URL]] [--protocol-version V] [--scenario ID]... [--junit FILE] [--json FILE] [--html FILE]
                          [--markdown FILE] [--docs-url URL] [--badge FILE]
                          [--expected-failures FILE] [-v]
       mcp-conform client reference [--broken NAME] URL

Grades an MCP client under session refreshes, expiry and server restarts.
For each client check ('mcp-conform list', CLI-*) the harness runs a
scripted, fault-injecting reference server and starts the client one or
more times as /bin/sh -c 'CMD URL', telling it what to do through
MCP_CONFORM_* environment variables (the client contract, see README).
Without --command it grades the reference client. --browser grades a web
page instead, each run a load of it in a tab of a real headless Chromium
and each kill the page torn down (the page contract, docs/client-mode.md);
without a URL, the reference browser client.

'mcp-conform client reference URL' is the reference client speaking the
contract (the same code as 'mcp-conform call'); --broken runs one of its
deliberately broken variants (see docs/client-mode.md).

Exit status: 0 all checks passed, 1 a check failed (or a baseline entry
passed), 2 usage or setup error.

flags:`

func runClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "reference" {
		return runClientReference(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o harness.ClientOptions
	fs.StringVar(&o.ProtocolVersion, "protocol-version", wire.DefaultProtocolVersion, fmt.Sprintf(
		"revision the client is told to speak (MCP_CONFORM_PROTOCOL_VERSION): %s, or %s (no sessions: only the checks that need none apply: %s)",
		wire.DefaultProtocolVersion, wire.SessionlessProtocolVersion, strings.Join(sessionlessClientChecks(), ", ")))
	fs.StringVar(&o.Command, "command", "", "command that starts the client under test; the server URL is appended (default: the reference client)")
	fs.BoolVar(&o.Browser, "browser", false, "grade a web page in a real headless Chromium instead of a command: the page URL follows the flag ({url} in it is the server's URL); without one, the reference browser client")
	var scenarios stringList
	fs.Var(&scenarios, "scenario", "run only this client check (repeatable, or comma-separated), e.g. CLI-RESUME")
	fs.StringVar(&o.JUnit, "junit", "", "write a JUnit XML report to this file")
	fs.StringVar(&o.JSON, "json", "", "write a JSON report to this file")
	fs.StringVar(&o.HTML, "html", "", "write a self-contained HTML report, with a timeline per check, to this file")
	fs.StringVar(&o.Markdown, "markdown", "", "write a Markdown report for a GitHub job summary or pull-request comment to this file")
	fs.StringVar(&o.Badge, "badge", "", "write a shields.io endpoint badge (JSON: checks passed by level, coloured by whether every required check passed) to this file")
	fs.StringVar(&o.DocsBase, "docs-url", "", "URL that the Markdown report's links to this project's documents start with, e.g. https://github.com/OWNER/mcp-conform/blob/REF/ (default: relative links)")
	expected := fs.String("expected-failures", "", "baseline file of check IDs allowed to fail (one per line, # comments)")
	fs.DurationVar(&o.Timeout, "timeout", harness.DefaultTimeout, "bound on the whole run")
	fs.IntVar(&o.Parallel, "parallel", harness.DefaultParallel(catalogue.Client), "how many checks run at once (default: one per core); 1 runs them one after another")
	fs.BoolVar(&o.Verbose, "v", false, "verbose: print every check's exchange log to stderr as it finishes")
	fs.Usage = func() {
		fmt.Fprintln(stderr, clientUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.Browser && fs.NArg() > 0 {
		// The page's URL follows --browser; flags may come after it.
		o.Page = fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return err
		}
	}
	switch {
	case o.Browser && fs.NArg() > 0:
		return usageError(fmt.Errorf("--browser takes one page URL, got %s %s", o.Page, strings.Join(fs.Args(), " ")))
	case o.Browser && o.Command != "":
		return usageError(errors.New("--browser grades a page and --command a process: give one"))
	default:
		if err := noArgs(fs); err != nil {
			return err
		}
	}
	if err := parallelFlag(o.Parallel); err != nil {
		return err
	}
	for _, s := range scenarios {
		for _, id := range strings.Split(s, ",") {
			if id = strings.TrimSpace(id); id != "" {
				o.Scenarios = append(o.Scenarios, id)
			}
		}
	}
	if o.Command == "" && !o.Browser {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the reference client: %w", err)
		}
		o.Command = shellQuote(exe) + " client reference"
	}
	ef, err := loadExpected(*expected)
	if err != nil {
		return err
	}
	o.ExpectedFailures = ef
	return verdict(harness.RunClient(ctx, o, stdout, stderr))
}

// sessionlessClientChecks are the client checks that apply under the
// revision without sessions.
func sessionlessClientChecks() []string {
	var ids []string
	for _, e := range suites.Of(catalogue.Client) {
		if e.Revisions.Has(wire.Revision20260728) {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
