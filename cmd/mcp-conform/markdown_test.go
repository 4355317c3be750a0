package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EMarkdownReport: --markdown writes the run's summary, the root cause
// first with the check it blocked beneath it, links to the resilience
// profile under --docs-url, and the passes collapsed.
func TestE2EMarkdownReport(t *testing.T) {
	skipShort(t, "end-to-end: runs checks against a fixture")
	md := filepath.Join(t.TempDir(), "summary.md")
	checkFixture(t, "unknown-id-400-everywhere", "../../fixtures/profile.yaml", exitFail,
		"--focus", "^(SESS-UNKNOWN-404|SESS-DELETE|SESS-ID-CHARS|GRACE-EXPIRES)$", "--markdown", md, "--docs-url", "https://example.org/mcp-conform/blob/v1")
	data, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	out := string(data)
	for _, want := range []string{
		"### ❌ mcp-conform server: FAILED",
		"**4 checks run: 1 pass, 1 fail, 2 blocked; 1 distinct defect**",
		"#### Failures (1)\n\n- ❌ **SESS-UNKNOWN-404** (MUST): ",
		"\n  - ⛔ **SESS-DELETE** (MUST, blocked): ",
		"\n  - ⛔ **GRACE-EXPIRES** (RES, blocked): ",
		"[resilience profile](https://example.org/mcp-conform/blob/v1/docs/resilience.md#grace-period-reaper)",
		"<details><summary>Passed (1)</summary>\n\n- ✅ **SESS-ID-CHARS** (MUST): ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Markdown report lacks %q:\n%s", want, out)
		}
	}
}
