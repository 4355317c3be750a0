package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func sample() *Run {
	r := &Run{Tool: "mcp-conform", Mode: "server", Target: "http://x/mcp", CheckSet: "all", ProtocolVersion: "2025-11-25",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Seconds: 1.5,
		Checks: []Check{
			{ID: "A-PASS", Level: "MUST", Section: "s", Verdict: Pass, Seconds: 0.1},
			{ID: "B-FAIL", Level: "MUST", Section: "s", Verdict: Fail, Message: "want 404\ngot 400", Location: "x.go:1", Exchange: "#1 → POST /mcp\n"},
			{ID: "C-WARN", Level: "SHOULD", Section: "s", Verdict: Warn, Message: "no priming"},
			{ID: "D-SKIP", Level: "RES", Section: "s", Verdict: Skip, Message: "needs target-config key tools.notifying", Cause: NeedsProfileKey},
			{ID: "E-OUT", Level: "RES", Section: "s", Verdict: Skip, Message: NotSelectedMessage, Cause: NotSelected},
			{ID: "F-STALE", Level: "MUST", Section: "s", Verdict: Stale, Message: "passed"},
			{ID: "G-XFAIL", Level: "MUST", Section: "s", Verdict: ExpectedFailure, Message: "409"},
			{ID: "H-INCONC", Level: "RES", Section: "s", Verdict: Inconclusive, Cause: Unobservable, Message: "the harness's own initialize took 3s, past the 1s idle threshold"},
			{ID: "I-BLOCKED", Level: "RES", Section: "s", Verdict: Blocked, BlockedBy: []string{"B-FAIL"}, Message: "blocked by B-FAIL"},
		}}
	r.Finish()
	return r
}

func TestFinish(t *testing.T) {
	r := sample()
	if r.Passed || r.Counts[Fail] != 1 || r.Counts[Skip] != 2 || r.Counts[Stale] != 1 || r.SchemaVersion != SchemaVersion {
		t.Errorf("passed=%v counts=%v", r.Passed, r.Counts)
	}
	// B-FAIL, C-WARN and G-XFAIL are findings; the blocked and the
	// inconclusive checks are not.
	if r.Defects != 3 || strings.Join(r.RootCauses, " ") != "B-FAIL C-WARN G-XFAIL" {
		t.Errorf("%d defects %v, want 3: B-FAIL C-WARN G-XFAIL", r.Defects, r.RootCauses)
	}
	ok := &Run{Checks: []Check{{Verdict: Pass}, {Verdict: Warn}, {Verdict: Info}, {Verdict: ExpectedFailure}, {Verdict: Inconclusive}, {Verdict: Blocked}}}
	ok.Finish()
	if !ok.Passed {
		t.Error("warnings, informational and expected failures, inconclusive and blocked checks must not fail the run")
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suite    struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
		Errors int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Tests != 9 || doc.Failures != 2 || doc.Skipped != 5 || doc.Errors != 1 {
		t.Errorf("tests=%d failures=%d skipped=%d errors=%d", doc.Tests, doc.Failures, doc.Skipped, doc.Errors)
	}
	var order []string
	for _, c := range doc.Suite.Cases {
		id, _, _ := strings.Cut(c.Name, ":")
		order = append(order, id)
	}
	// Root causes first: failures of the run, warnings, then what they blocked.
	if got := strings.Join(order[:5], " "); got != "B-FAIL F-STALE C-WARN I-BLOCKED H-INCONC" {
		t.Errorf("JUnit order %v", order)
	}
	fail := doc.Suite.Cases[0]
	if fail.Failure == nil || fail.Failure.Message != "want 404" || !strings.Contains(fail.Failure.Body, "#1 → POST /mcp") {
		t.Errorf("failure case: %+v", fail)
	}
	if w := doc.Suite.Cases[2]; w.Skipped == nil || !strings.HasPrefix(w.Skipped.Message, "warn: ") {
		t.Errorf("warning case: %+v", w)
	}
	if b := doc.Suite.Cases[3]; b.Skipped == nil || !strings.HasPrefix(b.Skipped.Message, "blocked: blocked by B-FAIL") {
		t.Errorf("blocked case: %+v", b)
	}
	if i := doc.Suite.Cases[4]; i.Error == nil || !strings.HasPrefix(i.Error.Message, "inconclusive: the harness's own") {
		t.Errorf("inconclusive case: %+v", i)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Checks) != 9 || back.Checks[1].Exchange == "" || back.Counts[Pass] != 1 || back.Defects != 3 || back.Checks[8].BlockedBy[0] != "B-FAIL" {
		t.Errorf("%+v", back)
	}
	for _, key := range []string{`"schema_version": 2`, `"check_set": "all"`, `"profile": "all"`, `"verdict": "fail"`, `"cause": "needs-profile-key"`, `"cause": "unobservable"`, `"duration_seconds"`, `"counts"`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestSummary(t *testing.T) {
	var b bytes.Buffer
	WriteSummary(&b, sample(), true)
	out := b.String()
	for _, want := range []string{"B-FAIL", "MUST", "FAIL", "got 400", "#1 → POST /mcp", "FAILED: 8 checks run", "1 not selected", "1 blocked", "1 inconclusive", "; 3 distinct defects", "INCONC", "BLOCKED"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "E-OUT") {
		t.Errorf("summary lists a check that was not selected:\n%s", out)
	}
	// Details: the root cause before the check it blocked.
	if f, b := strings.Index(out, "FAIL B-FAIL"), strings.Index(out, "BLOCKED I-BLOCKED"); f < 0 || b < f {
		t.Errorf("details do not put B-FAIL before I-BLOCKED:\n%s", out)
	}
}
