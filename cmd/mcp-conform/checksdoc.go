package main

import (
	"fmt"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks/brokenpages"
	"io"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/clients"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
)

// writeChecksDoc writes the catalogue as Markdown (docs/checks.md): per
// side and section, every check with its level, where it applies, what it
// needs, what its premise rests on, the fixtures that break it, its
// summary and its reference.
func writeChecksDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Checks\n\n" +
		"Generated from the catalogue by `mcp-conform list --markdown` (a test keeps it in step). " +
		"Levels: MUST, SHOULD and MAY from the MCP specification; RES from the [resilience profile](resilience.md). " +
		"*Applies to*: `sessions` (a 2025 target that issues session ids), `stateless` (a 2025 target that issues none), " +
		"`2026-07-28` (the sessionless revision, `--protocol-version 2026-07-28`). " +
		"*Rests on*: the checks its premise depends on; when one of them fails, this one is reported blocked by it. " +
		"*Fixtures*: the broken implementations it fails on (docs/fixtures.md); \"(blocked)\": one that breaks what its premise rests on, so it may come out blocked by that, \"(may be blocked)\": one that breaks it and also what its premise rests on. A behaviour links the recipe that fixes it on each SDK that has one ([recipes](recipes/README.md)).\n")
	for _, side := range []catalogue.Side{catalogue.Server, catalogue.Client} {
		fmt.Fprintf(&b, "\n## %s checks\n", strings.ToUpper(string(side[:1]))+string(side[1:]))
		section := ""
		for _, e := range suites.Of(side) {
			if e.Section != section {
				section = e.Section
				fmt.Fprintf(&b, "\n### %s\n\n| ID | level | applies to | needs | rests on | fixtures | behaviour |\n| --- | --- | --- | --- | --- | --- | --- |\n", section)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s ([reference](%s))%s |\n",
				e.ID, e.LevelText(), orDash(appliesTo(e)), orDash(e.NeedsText()), orDash(strings.Join(e.DependsOn, ", ")),
				orDash(strings.Join(breakersOf(e), ", ")), strings.ReplaceAll(e.Summary, "|", `\|`), link(e.SpecRef), fixes(e.ID))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fixes links the check's recipes (docs/recipes), one per SDK that has
// one, from docs/checks.md.
func fixes(id string) string {
	var out []string
	for _, r := range catalogue.Recipes(id) {
		out = append(out, fmt.Sprintf("[fix if built on the %s](%s)", r.SDK, strings.TrimPrefix(r.Ref, "docs/")))
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, ", ")
}

// appliesTo says on which kinds of target a check runs.
func appliesTo(e catalogue.Entry) string {
	var out []string
	if e.Revisions.Has(wire.Revision20251125) {
		out = append(out, "sessions")
	}
	if e.Stateless {
		out = append(out, "stateless")
	}
	if e.Revisions.Has(wire.Revision20260728) {
		out = append(out, "2026-07-28")
	}
	return strings.Join(out, ", ")
}

// breakersOf lists the fixtures a check fails on (or is blocked on).
func breakersOf(e catalogue.Entry) []string {
	var out []string
	if e.Side == catalogue.Client {
		for _, f := range clients.All() {
			if slices.Contains(f.Breaks, e.ID) {
				out = append(out, f.Name)
			}
		}
		for _, p := range brokenpages.All() {
			if slices.Contains(p.Breaks, e.ID) {
				out = append(out, p.Name+" (page)")
			}
		}
		return out
	}
	for _, f := range servers.All() {
		switch {
		case slices.Contains(f.Breaks, e.ID) && !suites.ProvesFailure(f, e.ID):
			out = append(out, f.Name+" (may be blocked)")
		case suites.Blockable(e.ID, f.Breaks):
			out = append(out, f.Name+" (blocked)")
		case slices.Contains(f.Breaks, e.ID), slices.Contains(f.ModernBreaks, e.ID):
			out = append(out, f.Name)
		}
	}
	return out
}

// link makes a reference into the repository's docs relative to docs/.
func link(ref string) string {
	if rest, ok := strings.CutPrefix(ref, "docs/"); ok {
		return rest
	}
	return ref
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
