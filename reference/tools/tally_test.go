package tools

import (
	"fmt"
	"testing"
)

// TestTallies: counts per name; past maxTallies the oldest name goes.
func TestTallies(t *testing.T) {
	var ts Tallies
	ts.Add("a")
	if n := ts.Add("a"); n != 2 || ts.Get("b") != 0 {
		t.Fatalf("a=%d b=%d", n, ts.Get("b"))
	}
	for i := range maxTallies {
		ts.Add(fmt.Sprint("n", i))
	}
	if ts.Get("a") != 0 || ts.Get("n0") != 1 || len(ts.counts) != maxTallies {
		t.Fatalf("after %d more names: a=%d n0=%d held %d", maxTallies, ts.Get("a"), ts.Get("n0"), len(ts.counts))
	}
	for _, bad := range []string{"", "a/b", "tally://x", string(make([]byte, 65))} {
		if ValidTallyName(bad) {
			t.Errorf("ValidTallyName(%q)", bad)
		}
	}
}
