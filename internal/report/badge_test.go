package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// checks builds n checks of a level with a verdict.
func checks(n int, level string, v Verdict) []Check {
	out := make([]Check, n)
	for i := range out {
		out[i] = Check{ID: fmt.Sprintf("%s-%s-%d", level, v, i), Level: level, Verdict: v}
	}
	return out
}

func TestBadge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		strict bool
		mode   string
		cs     [][]Check
		want   Badge
	}{
		{"every required check passed; a warning does not change the colour", false, "server",
			[][]Check{checks(31, "RES", Pass), checks(2, "RES", Skip), checks(16, "MUST", Pass), checks(3, "SHOULD", Pass), checks(1, "SHOULD", Warn)},
			Badge{1, "MCP reconnection", "31/31 RES, 16/16 MUST, 3/4 SHOULD", "brightgreen"}},
		{"a required failure", false, "server",
			[][]Check{checks(31, "RES", Pass), checks(2, "RES", Fail), checks(16, "MUST", Pass)},
			Badge{1, "MCP reconnection", "31/33 RES, 16/16 MUST", "red"}},
		{"an expected failure still did not pass", false, "server",
			[][]Check{checks(16, "MUST", Pass), checks(1, "MUST", ExpectedFailure)},
			Badge{1, "MCP reconnection", "16/17 MUST", "red"}},
		{"blocked by a warning", false, "server",
			[][]Check{checks(1, "SHOULD", Warn), checks(1, "RES", Blocked), checks(1, "MAY", Info)},
			Badge{1, "MCP reconnection", "0/1 RES, 0/1 SHOULD, 0/1 MAY", "red"}},
		{"strict: a SHOULD is required", true, "server",
			[][]Check{checks(2, "MUST", Pass), checks(1, "SHOULD", Fail)},
			Badge{1, "MCP reconnection", "2/2 MUST, 0/1 SHOULD", "red"}},
		{"inconclusive, nothing failed", false, "server",
			[][]Check{checks(5, "RES", Pass), checks(1, "RES", Inconclusive)},
			Badge{1, "MCP reconnection", "5/6 RES", "yellow"}},
		{"a stale baseline entry passed", false, "client",
			[][]Check{checks(15, "RES", Pass), checks(1, "RES", Stale)},
			Badge{1, "MCP client reconnection", "16/16 RES", "brightgreen"}},
		{"nothing ran", false, "server",
			[][]Check{checks(3, "RES", Skip)},
			Badge{1, "MCP reconnection", "no checks ran", "lightgrey"}},
	} {
		r := &Run{Mode: tc.mode, Strict: tc.strict}
		for _, cs := range tc.cs {
			r.Checks = append(r.Checks, cs...)
		}
		r.Finish()
		var b bytes.Buffer
		if err := WriteBadge(&b, r); err != nil {
			t.Fatal(err)
		}
		var got Badge
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, b.String())
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// The shields.io endpoint's field names.
	var b bytes.Buffer
	r := &Run{Mode: "server", Checks: checks(1, "MUST", Pass)}
	r.Finish()
	WriteBadge(&b, r)
	if want := `{"schemaVersion":1,"label":"MCP reconnection","message":"1/1 MUST","color":"brightgreen"}` + "\n"; b.String() != want {
		t.Errorf("badge %s, want %s", b.String(), want)
	}
}
