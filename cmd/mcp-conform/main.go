// Command mcp-conform checks MCP Streamable HTTP servers for session and
// reconnection behaviour, and serves the reference implementation.
package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/client/callcmd"
	"github.com/mcp-conform/mcp-conform/reference/cmdline"
)

// Exit codes: 0 success, 1 a required check failed (or the command failed),
// 2 usage or setup error.
const (
	exitOK    = cli.ExitOK
	exitFail  = cli.ExitFail
	exitUsage = cli.ExitUsage
)

// usageError marks err as one that exits with exitUsage.
func usageError(err error) error { return cli.Usage(err) }

// Flag helpers shared with the reference-server binary.
var (
	parseFlags = cli.ParseFlags
	noArgs     = cli.NoArgs
	flagSet    = cli.FlagSet
	renameFlag = cli.Rename
)

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
	{"init", "write a target profile, a baseline and a GitHub workflow for a server's repository", runInit, nil},
	// Not "serve": one letter from "server", which checks a server.
	{"reference-server", "run the reference MCP server", runServe, []string{"serve"}},
	{"call", "call a tool with the reference client, rejoining the session stored in a state directory", callcmd.Call, nil},
	{"fixture", "run a deliberately broken server", runFixture, nil},
	{"version", "print the version, commit and Go version", runVersion, []string{"--version", "-version"}},
}

func main() { cli.Main(run) }

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
		return cli.ExitCode(c.run(ctx, args[1:], stdout, stderr), "mcp-conform "+c.name, stderr)
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

// runServe is the reference-server command.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cmdline.Run(ctx, "mcp-conform reference-server", args, stdout, stderr)
}
