// Command reference-server runs the reference MCP Streamable HTTP server on
// its own: the server and flags of mcp-conform reference-server, in a binary
// without the harness (a third of the size, half the resident memory at
// start), for deployments and for measuring the server alone.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.ExitCode(serve.Run(ctx, "reference-server", args, stdout, stderr), "reference-server", stderr)
}
