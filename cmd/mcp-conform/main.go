// Command mcp-conform checks MCP Streamable HTTP servers for session and
// reconnection behaviour, and serves the reference implementation.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// Exit codes: 0 success, 1 a required check failed (or the command failed),
// 2 usage or setup error.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// usageError marks errors that exit with exitUsage.
type usageError struct{ error }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// aliases are earlier names that keep working.
	aliases []string
}

var commands = []command{
	{"server", "check an MCP server against the behaviour catalogue", runServer, nil},
	{"client", "grade an MCP client under session refreshes, expiry and restarts", runClient, nil},
	{"storm", "reset every connection of many sessions at once and count what the server lost", runStorm, nil},
	{"list", "print the behaviour catalogue", runList, nil},
	{"profile", "write a target profile to edit for a server, from the tools it advertises", runProfile, nil},
	// Not "serve": one letter from "server", which checks a server.
	{"reference-server", "run the reference MCP server", runServe, []string{"serve"}},
	{"call", "call a tool with the reference client, rejoining the session stored in a state directory", runCall, nil},
	{"fixture", "run a deliberately broken server", runFixture, nil},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name != args[0] && !slices.Contains(c.aliases, args[0]) {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case errors.As(err, new(usageError)):
			fmt.Fprintf(stderr, "mcp-conform %s: %v\n", c.name, err)
			return exitUsage
		default:
			fmt.Fprintf(stderr, "mcp-conform %s: %v\n", c.name, err)
			return exitFail
		}
	}
	fmt.Fprintf(stderr, "mcp-conform: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mcp-conform <command> [flags]\n\ncommands:")
	for _, c := range commands {
		summary := c.summary
		if len(c.aliases) > 0 {
			summary += " (also: " + strings.Join(c.aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-17s %s\n", c.name, summary)
	}
	fmt.Fprintln(w, "\nRun 'mcp-conform <command> -h' for a command's flags.")
}

// parseFlags parses a command's flags: -h is flag.ErrHelp (exit 0), any
// other error a usage error (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

// noArgs is the usage error of a command that takes no positional arguments.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))}
	}
	return nil
}
