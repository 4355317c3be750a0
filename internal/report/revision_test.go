package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// dual is a run of two revisions where ORIGIN-403 ran at both, passing at
// one and failing at the other, and TASK-X failed, blocked by its root at
// the same revision.
func dual() *Run {
	r := &Run{Tool: "mcp-conform", Mode: "server", Target: "http://x/mcp", CheckSet: "all",
		ProtocolVersion: "2025-11-25, 2026-07-28", Revisions: []string{"2025-11-25", "2026-07-28"},
		Checks: []Check{
			{ID: "ORIGIN-403", Revision: "2025-11-25", Level: "MUST", Section: "sessions", Verdict: Pass},
			{ID: "ORIGIN-403", Revision: "2026-07-28", Level: "MUST", Section: "sessions", Verdict: Fail, Message: "got 200, want 403"},
			{ID: "TASK-DURABLE-CREATE", Revision: "2026-07-28", Level: "MUST", Section: "tasks", Verdict: Fail, Message: "no task"},
			{ID: "TASK-CREATE-FAST", Revision: "2026-07-28", Level: "SHOULD", Section: "tasks", Verdict: Blocked,
				BlockedBy: []string{"TASK-DURABLE-CREATE@2026-07-28"}, Message: "blocked by TASK-DURABLE-CREATE"},
		}}
	r.Finish()
	return r
}

// TestRevisionNames: in a run of several revisions every report names a
// check ID@revision, so a check run at both appears twice, distinctly,
// and says its revision.
func TestRevisionNames(t *testing.T) {
	r := dual()
	if got := strings.Join(r.RootCauses, " "); got != "ORIGIN-403@2026-07-28 TASK-DURABLE-CREATE@2026-07-28" {
		t.Errorf("root causes %q", got)
	}
	if (Check{ID: "A"}).Name() != "A" {
		t.Error("a check of a run of one revision is named by its ID")
	}

	var console bytes.Buffer
	WriteSummary(&console, r, false)
	for _, want := range []string{"protocol 2025-11-25, 2026-07-28", "ORIGIN-403@2025-11-25           MUST    PASS", "FAIL ORIGIN-403@2026-07-28 (MUST)"} {
		if !strings.Contains(console.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, console.String())
		}
	}
	if line := ProgressLine(1, 2, r.Checks[1]); !strings.Contains(line, "FAIL    ORIGIN-403@2026-07-28") {
		t.Errorf("progress line %q", line)
	}

	var junit bytes.Buffer
	if err := WriteJUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name  string `xml:"name,attr"`
			Props []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, c := range doc.Cases {
		for _, p := range c.Props {
			if p.Name == "protocol_version" {
				names[c.Name] = p.Value
			}
		}
	}
	for name, rev := range map[string]string{"ORIGIN-403@2025-11-25: ": "2025-11-25", "ORIGIN-403@2026-07-28: ": "2026-07-28"} {
		if names[name] != rev {
			t.Errorf("JUnit testcase %q has protocol_version %q, want %s; testcases %v", name, names[name], rev, names)
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Checks[1].Revision != "2026-07-28" || len(back.Revisions) != 2 || !strings.Contains(js.String(), `"revision": "2025-11-25"`) {
		t.Errorf("JSON: %s", js.String())
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="c-ORIGIN-403@2025-11-25"`, `id="c-ORIGIN-403@2026-07-28"`, "blocks TASK-CREATE-FAST@2026-07-28"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}

	md := markdown(t, r, "")
	for _, want := range []string{"protocol 2025-11-25, 2026-07-28.", "**ORIGIN-403@2026-07-28** (MUST)", "  - ⛔ **TASK-CREATE-FAST@2026-07-28** (SHOULD, blocked)", "**ORIGIN-403@2025-11-25**"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}
