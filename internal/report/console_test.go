package report

import (
	"strings"
	"testing"
)

// TestNothingGraded: a run whose every check skipped does not say PASSED:
// it says nothing was graded, and why, in the console and the Markdown.
func TestNothingGraded(t *testing.T) {
	r := &Run{Mode: "client", Checks: []Check{
		{ID: "A", Verdict: Skip, Message: "not applicable: the client forces 2025-06-18"},
		{ID: "B", Verdict: Skip, Message: "not applicable: the client forces 2025-06-18"},
		{ID: "C", Verdict: Skip, Cause: NotSelected, Message: NotSelectedMessage},
	}}
	r.Finish()
	var b strings.Builder
	WriteSummary(&b, r, false)
	if out := b.String(); strings.Contains(out, "PASSED") || !strings.Contains(out, "NOTHING GRADED") || !strings.Contains(out, "2 of the checks skipped: not applicable: the client forces 2025-06-18") {
		t.Errorf("summary:\n%s", out)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, r, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "PASSED") || !strings.Contains(md.String(), "NOTHING GRADED") {
		t.Errorf("markdown:\n%s", md.String())
	}
	r.Checks[0].Verdict = Pass
	r.Finish()
	if r.Result() != "PASSED" {
		t.Errorf("one pass: %s", r.Result())
	}
}
