package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/fixtures/clients"
	"github.com/mcp-conform/mcp-conform/reference/client/callcmd"
)

// runClientReference is the reference client as a client under test: it
// reads the contract's environment and runs `mcp-conform call` for it
// (call, list, resume, disconnect); show prints the state directory's
// contents. --broken wraps call in one of the broken variants.
func runClientReference(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client reference", flag.ContinueOnError)
	fs.SetOutput(stderr)
	broken := fs.String("broken", "", "run a deliberately broken variant of the reference client (docs/client-mode.md)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp-conform client reference [--broken NAME] URL\n\nThe reference client under the client contract (MCP_CONFORM_* variables).\n\nvariants:")
		for _, f := range clients.All() {
			fmt.Fprintf(stderr, "  %-28s %s (breaks %v)\n", f.Name, f.About, f.Breaks)
		}
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(errors.New("want exactly one argument, the server URL"))
	}
	r, err := contract.FromEnv(fs.Arg(0))
	if err != nil {
		return usageError(err)
	}
	var fx clients.Fixture
	if *broken != "" {
		if fx, err = clients.Lookup(*broken); err != nil {
			return usageError(err)
		}
	}
	do := func() error { return callcmd.Contract(ctx, r, fx.Flags, stdout, stderr) }
	if fx.Transport != nil {
		http.DefaultTransport = fx.Transport(http.DefaultTransport)
	}
	if fx.Output != nil {
		stdout = fx.Output(stdout)
	}
	if fx.IgnoreCancel {
		ctx = context.WithoutCancel(ctx)
	}
	if fx.Around != nil {
		return fx.Around(r, do)
	}
	return do()
}
