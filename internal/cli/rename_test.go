package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestRename: a flag's earlier name sets the same value, with a note that
// names the flag to write instead; the new name sets it with no note.
func TestRename(t *testing.T) {
	for _, tc := range []struct {
		args []string
		note bool
	}{
		{[]string{"--checks", "spec"}, false},
		{[]string{"--profile", "spec"}, true},
	} {
		fs := flag.NewFlagSet("server", flag.ContinueOnError)
		var out bytes.Buffer
		fs.SetOutput(&out)
		checks := fs.String("checks", "all", "the check set")
		Rename(fs, "profile", "checks")
		if err := ParseFlags(fs, tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if *checks != "spec" {
			t.Errorf("%v: --checks is %q, want spec", tc.args, *checks)
		}
		if got := strings.Contains(out.String(), "note: --profile is now --checks"); got != tc.note {
			t.Errorf("%v: output %q, want the note: %v", tc.args, out.String(), tc.note)
		}
	}
}
