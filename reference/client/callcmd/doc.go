// Package callcmd is the reference client's command line: `mcp-conform
// call` (Call) and the client contract's bridge to it (Contract), which
// `mcp-conform client reference` runs as a process and the reference
// browser client runs in a page. Its state is a directory there and the
// page's localStorage here (open, by platform).
package callcmd

import (
	"errors"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/cli"
)

var (
	usageError = cli.Usage
	parseFlags = cli.ParseFlags
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty value")
	}
	*l = append(*l, v)
	return nil
}
