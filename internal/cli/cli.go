// Package cli holds what the project's commands share about flags and
// exit codes: a usage error exits 2, -h exits 0.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcp-conform/mcp-conform/internal/inert"
)

// Exit codes: 0 success, 1 a required check failed (or the command failed),
// 2 usage or setup error.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// UsageError marks errors that exit with ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as a usage error.
func Usage(err error) error { return UsageError{Err: err} }

// ParseFlags parses a command's flags: -h is flag.ErrHelp (exit 0), any
// other error a usage error (exit 2).
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usage(err)
	}
	fs.Visit(func(f *flag.Flag) {
		if now, ok := strings.CutPrefix(f.Usage, renamedPrefix); ok {
			fmt.Fprintf(fs.Output(), "note: --%s is now --%s; the old name still works, for now\n", f.Name, now)
		}
	})
	return nil
}

// renamedPrefix begins the usage of a flag's earlier name (see Rename).
const renamedPrefix = "deprecated: the same as --"

// Rename gives the flag now (already defined in fs) its earlier name old
// too: a command line using it still works, with a note on what to write
// instead.
func Rename(fs *flag.FlagSet, old, now string) {
	fs.Var(fs.Lookup(now).Value, old, renamedPrefix+now)
}

// NoArgs is the usage error of a command that takes no positional arguments.
func NoArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return Usage(fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	return nil
}

// FlagSet reports whether the command line set the flag name.
func FlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// ExitCode is the exit status for a command's error; it prints the error,
// prefixed with prog, unless it is nil or -h.
func ExitCode(err error, prog string, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, new(UsageError)):
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return ExitFail
	}
}

// Main runs a command's run with its arguments and standard streams, in a
// context that SIGINT and SIGTERM end, and exits with the status it returns.
// What the command prints reaches the standard streams through
// inert.Writer: a target's text in it is data on a terminal and in a CI
// step log, never escape sequences or workflow commands.
func Main(run func(ctx context.Context, args []string, stdout, stderr io.Writer) int) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stdout, stderr := inert.NewWriter(os.Stdout), inert.NewWriter(os.Stderr)
	code := run(ctx, os.Args[1:], stdout, stderr)
	stop()
	_ = stdout.Flush()
	_ = stderr.Flush()
	os.Exit(code)
}

// StringList is a repeatable string flag; an empty value is an error.
type StringList []string

func (l *StringList) String() string { return strings.Join(*l, ",") }

func (l *StringList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty value")
	}
	*l = append(*l, v)
	return nil
}
