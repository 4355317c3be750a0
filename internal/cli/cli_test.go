package cli

import (
	"bytes"
	"errors"
	"flag"
	"testing"
)

// TestExitCode: nil and -h exit 0 silently, a usage error 2 and any other
// error 1, each printed after the command's name.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		out  string
	}{
		{nil, ExitOK, ""},
		{flag.ErrHelp, ExitOK, ""},
		{Usage(errors.New("bad flag")), ExitUsage, "cmd: bad flag\n"},
		{errors.New("failed"), ExitFail, "cmd: failed\n"},
	} {
		var out bytes.Buffer
		if code := ExitCode(tc.err, "cmd", &out); code != tc.code || out.String() != tc.out {
			t.Errorf("%v: exit %d, printed %q; want %d, %q", tc.err, code, out.String(), tc.code, tc.out)
		}
	}
}
