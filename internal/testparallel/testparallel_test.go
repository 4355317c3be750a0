package testparallel

import (
	"flag"
	"testing"
)

// TestRaise: test.parallel is raised unless the command line gave it.
func TestRaise(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "8"},
		{[]string{"-test.parallel", "3"}, "3"},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.Int("test.parallel", 2, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		raise(fs, 8)
		if got := fs.Lookup("test.parallel").Value.String(); got != tc.want {
			t.Errorf("args %q: test.parallel %s, want %s", tc.args, got, tc.want)
		}
	}
}
