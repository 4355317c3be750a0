package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set by release builds: -ldflags "-X main.version=v1.2.3 -X main.commit=SHA".
// A build from a clone has neither; its build information then says what
// it knows.
var version, commit string

// versionLine is what 'mcp-conform version' prints: the version, the
// commit (and whether the tree had uncommitted changes) and the Go
// toolchain, from the build information.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	v, rev, modified := version, commit, false
	if ok {
		if v == "" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	c := "commit unknown"
	if rev != "" {
		c = "commit " + rev
		if modified {
			c += ", modified"
		}
	}
	goVersion := runtime.Version()
	if ok && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	return fmt.Sprintf("mcp-conform %s (%s; %s %s/%s)", v, c, goVersion, runtime.GOOS, runtime.GOARCH)
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("version takes no arguments, got %q", args))
	}
	bi, ok := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(stdout, versionLine(bi, ok))
	return err
}
