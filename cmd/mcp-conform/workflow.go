package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/harness"
)

// release matches a released version (not a pseudo-version, not dirty).
var release = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// defaultAction is the action init's workflow uses: this module's GitHub
// repository, at this binary's release, or at main for a build from a
// clone.
func defaultAction() string {
	repo, ref := "mcp-conform/mcp-conform", "main"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if p, ok := strings.CutPrefix(bi.Main.Path, "github.com/"); ok {
			repo = p
		}
		if release.MatchString(bi.Main.Version) {
			ref = bi.Main.Version
		}
	}
	return repo + "@" + ref
}

// workflow is the GitHub Actions workflow init writes: the action, run
// with the profile and the baseline init wrote beside it.
func workflow(o harness.Options, action string) string {
	var b strings.Builder
	b.WriteString(`# MCP session and reconnection conformance (mcp-conform), written by
# mcp-conform init. A failure that ` + initExpected + `
# does not list fails this job, and so does a listed check that passes
# (delete its line when you fix one). The reports are in the job summary
# and in the mcp-conform-reports artifact.
name: mcp-conform
on:
  push:
  pull_request:
jobs:
  mcp-conform:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
`)
	if o.ServerCmd != "" {
		b.WriteString("      # Install and build the server here if its command needs it, e.g.\n")
		b.WriteString("      # - run: npm ci && npm run build\n")
	} else {
		b.WriteString("      # Start the server here (a background process, or a service\n")
		b.WriteString("      # container), so that it answers at the url below; or give the\n")
		b.WriteString("      # action server-command, with {port} in it and in the url: the harness\n")
		b.WriteString("      # then starts it, and restarts it for the checks that need a restart.\n")
	}
	fmt.Fprintf(&b, "      - uses: %s\n        with:\n", action)
	with := func(k, v string) { fmt.Fprintf(&b, "          %s: %s\n", k, harness.QuoteYAML(v)) }
	if o.ServerCmd != "" {
		with("server-command", o.ServerCmd)
	}
	with("url", o.URL)
	with("target-profile", initProfile)
	with("expected-failures", initExpected)
	if o.Checks != catalogue.CheckSetAll {
		with("check-set", string(o.Checks))
	}
	if o.Strict {
		with("strict", "true")
	}
	if o.ProtocolVersion != harness.DiscoverRevisions {
		with("protocol-version", o.ProtocolVersion)
	}
	if o.Focus != "" {
		with("args", "--focus "+shellQuote(o.Focus))
	}
	b.WriteString(`      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: mcp-conform-reports
          path: mcp-conform-reports/
`)
	return b.String()
}
