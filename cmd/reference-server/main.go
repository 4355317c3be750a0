// Command reference-server runs the reference MCP Streamable HTTP server on
// its own: the server and flags of mcp-conform reference-server, in a binary
// without the harness (a third of the size, half the resident memory at
// start), for deployments and for measuring the server alone.
package main

import (
	"context"
	"io"

	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/cmdline"
)

func main() { cli.Main(run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.ExitCode(cmdline.Run(ctx, "reference-server", args, stdout, stderr), "reference-server", stderr)
}
