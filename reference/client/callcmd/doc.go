// Package callcmd is the reference client's command line: `mcp-conform
// call` (Call) and the client contract's bridge to it (Contract), which
// `mcp-conform client reference` runs as a process and the reference
// browser client runs in a page. Its state is a directory there and the
// page's localStorage here (open, by platform).
package callcmd

import (
	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

var (
	usageError = cli.Usage
	parseFlags = cli.ParseFlags
)

// stringList is a repeatable string flag.
type stringList = cli.StringList

// store is the client's storage as the command opens it (open, by
// platform).
type store interface {
	storage.Storage
	Close() error
}
