package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func markdown(t *testing.T, r *Run, base string) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, base); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMarkdown(t *testing.T) {
	r := sample()
	r.Checks[1].SpecRef = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management"
	r.Checks[8].SpecRef = "docs/resilience.md#grace-period-reaper"
	r.Checks[2].Message = "no priming event: got `: ok` <comment> | *here*"
	out := markdown(t, r, "")
	for _, want := range []string{
		"### ❌ mcp-conform server: FAILED",
		// One line of totals, with the distinct defects.
		"**8 checks run: 1 pass, 1 fail, 1 warn, 1 blocked, 1 inconclusive, 1 skip, 1 expected-failure, 1 stale; 3 distinct defects** (1.5 s)",
		"Target `http://x/mcp`, check set all, protocol 2025-11-25.",
		"#### Failures (2)",
		// The level, the first line of the message, the reference.
		"- ❌ **B-FAIL** (MUST): want 404 · [spec](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management)",
		// The check it blocked, beneath it, linked to the resilience profile.
		"  - ⛔ **I-BLOCKED** (RES, blocked): blocked by B-FAIL · [resilience profile](docs/resilience.md#grace-period-reaper)",
		"- ❌ **F-STALE** (MUST, stale): passed",
		"#### Warnings (1)",
		"- ⚠️ **C-WARN** (SHOULD): no priming event: got \\`: ok\\` \\<comment\\> \\| \\*here\\*",
		"#### Inconclusive (1)",
		"<details><summary>Expected failures (1), from --expected-failures</summary>",
		"<details><summary>Passed (1) and skipped (1)</summary>",
		"- ⏭️ **D-SKIP** (RES): needs target-config key tools.notifying",
		"1 checks not selected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "got 400") || strings.Contains(out, "E-OUT") || strings.Contains(out, "POST /mcp") {
		t.Errorf("Markdown has more than a first line, or a check not selected:\n%s", out)
	}
	// Failures, then warnings, then inconclusive, then the collapsed lists.
	order := []string{"#### Failures", "#### Warnings", "#### Inconclusive", "Expected failures (1)", "Passed (1)"}
	for i := 1; i < len(order); i++ {
		if strings.Index(out, order[i-1]) > strings.Index(out, order[i]) {
			t.Errorf("%q comes after %q:\n%s", order[i-1], order[i], out)
		}
	}
	if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
		t.Errorf("unbalanced <details>:\n%s", out)
	}
}

func TestMarkdownDocsBase(t *testing.T) {
	r := &Run{Mode: "server", Checks: []Check{{ID: "GRACE-EXPIRES", Level: "RES", Verdict: Fail, Message: "not expired", SpecRef: "docs/resilience.md#grace-period-reaper"}}}
	r.Finish()
	out := markdown(t, r, "https://github.com/o/mcp-conform/blob/v1.2.0/")
	if want := "[resilience profile](https://github.com/o/mcp-conform/blob/v1.2.0/docs/resilience.md#grace-period-reaper)"; !strings.Contains(out, want) {
		t.Errorf("Markdown lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "### ❌ mcp-conform server: FAILED") || !strings.Contains(out, "1 distinct defect**") {
		t.Errorf("header:\n%s", out)
	}
}

func TestMarkdownPassed(t *testing.T) {
	r := &Run{Mode: "client", Target: "node `x`.mjs", Checks: []Check{{ID: "CLI-RESUME", Level: "RES", Summary: "resumes the stream", Verdict: Pass}}}
	r.Finish()
	out := markdown(t, r, "")
	for _, want := range []string{"### ✅ mcp-conform client: PASSED", "0 distinct defects", "Target `` node `x`.mjs ``", "- ✅ **CLI-RESUME** (RES): resumes the stream"} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "<summary>Passed (1)</summary>") {
		t.Errorf("the collapsed list is not titled by what it holds:\n%s", out)
	}
	if strings.Contains(out, "####") {
		t.Errorf("a passing run has no failure sections:\n%s", out)
	}
}

// TestMarkdownLimit: a run far larger than any real one (long messages,
// many checks) stays under the limit, keeps its failures and the totals,
// truncates messages, and counts what it leaves out.
func TestMarkdownLimit(t *testing.T) {
	r := &Run{Mode: "server"}
	long := strings.Repeat("é", 1000) + "\nsecond line"
	for i := range 2000 {
		v := Pass
		switch i % 4 {
		case 0:
			v = Fail
		case 1:
			v = Warn
		case 2:
			v = Inconclusive
		}
		r.Checks = append(r.Checks, Check{ID: fmt.Sprintf("C-%04d", i), Level: "MUST", Verdict: v, Message: long, Summary: long,
			SpecRef: "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management"})
	}
	r.Finish()
	out := markdown(t, r, "")
	if len(out) > MarkdownLimit {
		t.Fatalf("%d bytes, over the %d limit", len(out), MarkdownLimit)
	}
	if !strings.Contains(out, "2000 checks run: 500 pass, 500 fail") || !strings.Contains(out, "- ❌ **C-0000** (MUST): "+strings.Repeat("é", maxMessage-1)+"… · [spec]") {
		t.Errorf("totals or first failure missing:\n%.2000s", out)
	}
	if strings.Contains(out, "second line") {
		t.Error("a message's second line is in the summary")
	}
	listed := strings.Count(out, "\n- ")
	if !strings.Contains(out, fmt.Sprintf("\n%d checks are not listed here", 2000-listed)) {
		t.Errorf("%d listed; the note on the rest is missing or wrong:\n%s", listed, out[len(out)-2000:])
	}
	if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
		t.Error("unbalanced <details>")
	}
}

// TestFixLinks: a failed check's recipes are linked from the Markdown
// (under the docs base) and named in the console's details.
func TestFixLinks(t *testing.T) {
	r := &Run{Mode: "server", Checks: []Check{{ID: "ORIGIN-403", Level: "MUST", Verdict: Fail, Message: "served",
		Fixes: []Fix{{SDK: "TypeScript SDK 1.x", Ref: "docs/recipes/typescript-sdk.md#origin-403"}}}}}
	r.Finish()
	out := markdown(t, r, "https://github.com/o/mcp-conform/blob/v1.2.0/")
	if want := "[fix if built on the TypeScript SDK 1.x](https://github.com/o/mcp-conform/blob/v1.2.0/docs/recipes/typescript-sdk.md#origin-403)"; !strings.Contains(out, want) {
		t.Errorf("Markdown lacks %q:\n%s", want, out)
	}
	var b strings.Builder
	WriteSummary(&b, r, false)
	for _, want := range []string{"the fix if it is built on the TypeScript SDK 1.x: docs/recipes/typescript-sdk.md#origin-403", FixesNote} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, b.String())
		}
	}
	var j strings.Builder
	if err := WriteJUnit(&j, r); err != nil {
		t.Fatal(err)
	}
	if want := `<property name="fix" value="TypeScript SDK 1.x: docs/recipes/typescript-sdk.md#origin-403">`; !strings.Contains(j.String(), want) {
		t.Errorf("JUnit lacks %q:\n%s", want, j.String())
	}
}
