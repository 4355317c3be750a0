package harness

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks"
)

// ClientOptions are the settings of a client-mode run.
type ClientOptions struct {
	Common
	// Command starts the client under test (run by /bin/sh -c with the
	// scripted server's URL appended).
	Command string
	// Scenarios are the client check IDs to run; empty runs them all.
	Scenarios []string
	// ProtocolVersion is the revision the client is told to speak: ""
	// (2025-11-25) or 2026-07-28, where the checks that need sessions are
	// not applicable.
	ProtocolVersion string
	// Browser grades a web page instead of Command, in a real Chromium
	// (--browser): Page, or the reference browser client when Page is "".
	Browser bool
	Page    string
}

// RunClient runs the client checks once against the client that
// o.Command starts, each check with a scripted, fault-injecting reference
// server of its own, and returns the result.
func RunClient(ctx context.Context, o ClientOptions, stdout, stderr io.Writer) (*report.Run, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "mcp-conform-client-")
	if err != nil {
		return nil, &SetupError{fmt.Errorf("state directories: %w", err)}
	}
	defer os.RemoveAll(root)
	version := wire.DefaultProtocolVersion
	if o.ProtocolVersion != "" {
		version = o.ProtocolVersion
	}
	cl := &clientchecks.Client{Command: o.Command, StateRoot: root, ProtocolVersion: o.ProtocolVersion, Parallel: o.Parallel}
	target := o.Command
	if o.Browser {
		page, stop, err := openPage(o.Page, root)
		if err != nil {
			return nil, err
		}
		defer stop()
		cl.Page, target = page, page.URL
		if o.Page == "" {
			target = "the reference browser client (" + page.URL + ")"
		}
	}
	run := &report.Run{
		Tool: "mcp-conform", Mode: "client", Target: target, CheckSet: string(catalogue.CheckSetResilience),
		ProtocolVersion: version,
	}
	// The revision the scripted server speaks, which the run grades.
	fmt.Fprintf(stdout, "mcp-conform client: checking %s (protocol %s, %d at a time)\n", target, version, o.Parallel)
	if version == wire.SessionlessProtocolVersion {
		fmt.Fprintf(stdout, "note: %s has no sessions: only the checks that need none apply (the task checks and those of 2026-07-28 alone); the others are not applicable\n", version)
	}
	// Budgets come from the client: one undisturbed run first.
	fmt.Fprintf(stdout, "measured: %s\n", cl.Measure(ctx))
	var jobs []job
	for _, c := range clientchecks.Checks(cl) {
		jobs = append(jobs, job{Check: c})
	}
	en := o.engine(false, DefaultMargin, stdout, stderr)
	en.revision = version
	selected := o.selector()
	return o.Common.finish(ctx, run, en, jobs, func(j job) bool { return selected(j.Entry) }, stdout)
}

// selector selects the client checks named by --scenario, or all of them.
func (o *ClientOptions) selector() func(catalogue.Entry) bool {
	var focus func(catalogue.Entry) bool
	if len(o.Scenarios) > 0 {
		focus = func(e catalogue.Entry) bool { return slices.Contains(o.Scenarios, e.ID) }
	}
	return selector(catalogue.Client, catalogue.CheckSetAll, nil, focus)
}

func (o *ClientOptions) validate() error {
	switch {
	case o.Browser && o.Command != "":
		return setupErr("--browser grades a page, --command a process: give one")
	case o.Browser && o.Page != "":
		if u, err := url.Parse(o.Page); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return setupErr("--browser %q: want the page's http:// or https:// URL", o.Page)
		}
	case !o.Browser && strings.TrimSpace(o.Command) == "":
		return setupErr("--command is empty")
	}
	switch o.ProtocolVersion {
	case "", wire.DefaultProtocolVersion:
		o.ProtocolVersion = ""
	case wire.SessionlessProtocolVersion:
	default:
		return setupErr("--protocol-version: client mode speaks %s or %s, got %q", wire.DefaultProtocolVersion, wire.SessionlessProtocolVersion, o.ProtocolVersion)
	}
	scenarios := map[string]bool{}
	for _, id := range o.Scenarios {
		scenarios[id] = true
	}
	if unknown := unknownIDs(catalogue.Client, scenarios); len(unknown) > 0 {
		return setupErr("--scenario: not client checks: %s (see 'mcp-conform list')", idList(unknown))
	}
	return o.Common.validate(catalogue.Client)
}
