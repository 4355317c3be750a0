package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
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
	out := fs.String("out", "", "write the profile to this file instead of stdout (not over a file that exists, without --force)")
	force := fs.Bool("force", false, "with --out, replace a file that exists")
	token := fs.String("bearer-token", "", "send Authorization: Bearer TOKEN, for a server that needs one")
	version := fs.String("protocol-version", harness.DiscoverRevisions, "protocol revision to list the tools at: 'auto' (the first the server speaks: "+wire.DefaultProtocolVersion+" or the one it negotiates, else "+wire.SessionlessProtocolVersion+") or one revision")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: mcp-conform profile --url URL [--out FILE [--force]] [--bearer-token TOKEN]

Writes a target profile to edit for the server at URL, without running any
check: the tools it advertises (tools/list), likely candidates for
tools.notifying and tools.stateful, and the timings, principals, origins
and recovery hint commented out, each with what it enables. --out never
replaces a file that exists unless --force is given, and never writes
through a symbolic link (exit 2).

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
	if *out != "" {
		if err := writable(*out, *force); err != nil {
			return err
		}
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
	if err := harness.WriteFile(*out, []byte(text), 0o644, *force); err != nil {
		return writeError(err)
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return nil
}

// writable refuses, before the server is asked anything, what the write
// would: a symbolic link at path, or a file there without force.
func writable(path string, force bool) error {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil // the write says what else is wrong
	case st.Mode()&iofs.ModeSymlink != 0:
		return writeError(&iofs.PathError{Op: "write", Path: path, Err: harness.ErrSymlink})
	case !force:
		return writeError(&iofs.PathError{Op: "write", Path: path, Err: iofs.ErrExist})
	}
	return nil
}

// writeError makes a refused write a usage error that says what to do.
func writeError(err error) error {
	var pe *iofs.PathError
	switch {
	case errors.Is(err, harness.ErrSymlink) && errors.As(err, &pe):
		return usageError(fmt.Errorf("%s is a symbolic link: nothing is written through one (remove it, or write elsewhere)", pe.Path))
	case errors.Is(err, iofs.ErrExist) && errors.As(err, &pe):
		return usageError(fmt.Errorf("%s exists: nothing written (--force overwrites)", pe.Path))
	}
	return err
}
