package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/suites"
)

func runList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the catalogue as JSON")
	asMarkdown := fs.Bool("markdown", false, "print the catalogue as Markdown, with the fixtures that break each check (docs/checks.md)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp-conform list [--json | --markdown]\n\nPrints the behaviour catalogue: ID, level, section, what it needs, and a one-line description.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	all := suites.All()
	if *asJSON && *asMarkdown {
		return usageError(errors.New("--json and --markdown: choose one"))
	}
	if *asMarkdown {
		return writeChecksDoc(stdout)
	}
	if *asJSON {
		// Each entry with the recipes that fix it, per SDK (docs/recipes).
		type listed struct {
			catalogue.Entry
			Fixes []catalogue.Recipe `json:"fixes,omitempty"`
		}
		out := make([]listed, len(all))
		for i, e := range all {
			out[i] = listed{e, catalogue.Recipes(e.ID)}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tSIDE\tSECTION\tNEEDS\tRUNS\tDESCRIPTION")
	for _, e := range all {
		needs := e.NeedsText()
		if needs == "" {
			needs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", e.ID, e.LevelText(), e.Side, e.Section, needs, runs(e), e.Summary, fixesOf(e.ID))
	}
	return tw.Flush()
}

// fixesOf names the recipes for check id, one per SDK that has one, after
// a check's description: " Fixes: the TypeScript SDK 1.x docs/recipes/…;
// …", or "".
func fixesOf(id string) string {
	var out []string
	for _, r := range catalogue.Recipes(id) {
		out = append(out, "the "+r.SDK+" "+r.Ref)
	}
	if len(out) == 0 {
		return ""
	}
	return " Fixes: " + strings.Join(out, "; ")
}

// runs says how the engine runs a check: alone (it may disturb the whole
// target), silent on purpose (its session is not kept warm), or "-".
func runs(e catalogue.Entry) string {
	var out []string
	if e.Exclusive {
		out = append(out, "alone")
	}
	if e.Idle {
		out = append(out, "idle")
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ",")
}
