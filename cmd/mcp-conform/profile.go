package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// runProfile writes a target profile to edit for the server at --url:
// the tools it advertises, likely candidates for the notifying and
// stateful tools, and every other key commented out.
func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "MCP endpoint to describe (required)")
	out := fs.String("out", "", "write the profile to this file instead of stdout")
	token := fs.String("bearer-token", "", "send Authorization: Bearer TOKEN, for a server that needs one")
	version := fs.String("protocol-version", harness.DiscoverRevisions, "protocol revision to list the tools at: 'auto' (the first the server speaks: "+wire.DefaultProtocolVersion+" or the one it negotiates, else "+wire.SessionlessProtocolVersion+") or one revision")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: mcp-conform profile --url URL [--out FILE] [--bearer-token TOKEN]

Writes a target profile to edit for the server at URL, without running any
check: the tools it advertises (tools/list), likely candidates for
tools.notifying and tools.stateful, and the timings, principals, origins
and recovery hint commented out, each with what it enables.

flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *url == "" {
		return usageError(fmt.Errorf("--url is required"))
	}
	if err := explicitDir(fs, "out", *out); err != nil {
		return err
	}
	cfg := &target.Profile{}
	if *token != "" {
		cfg.Principals = []target.Principal{{Token: *token}}
	}
	text, err := harness.SuggestProfile(ctx, *url, *version, cfg)
	if err != nil {
		return verdict(nil, err)
	}
	if *out == "" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return nil
}
