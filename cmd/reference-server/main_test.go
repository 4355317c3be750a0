package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/cli"
)

// TestRun: bad flags exit 2 and -h 0, named as this command; serving
// itself is reference/serve's (TestRun there).
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--grace-period", "0"}, cli.ExitUsage, "reference-server: --grace-period must be positive"},
		{[]string{"extra"}, cli.ExitUsage, "unexpected arguments: extra"},
		{[]string{"-h"}, cli.ExitOK, "usage: reference-server [flags]"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), tc.args, io.Discard, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d containing %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
