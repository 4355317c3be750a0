package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
	"github.com/mcp-conform/mcp-conform/target"
)

func tool(name, desc string, args ...string) advertisedTool {
	t := advertisedTool{Name: name, Description: desc}
	t.InputSchema.Properties = map[string]json.RawMessage{}
	for _, a := range args {
		t.InputSchema.Properties[a] = json.RawMessage(`{}`)
	}
	return t
}

// TestSuggestedProfile: the suggestion parses as it is, names the
// advertised tools and the likely candidates, and its tools block, once
// uncommented and filled in, is a valid profile declaring them.
func TestSuggestedProfile(t *testing.T) {
	tools := []advertisedTool{
		tool("search", "Search documents", "query"),
		tool("slow_task", "Runs for a while, reporting progress", "steps", "delay_ms"),
		tool("next_number", "Returns the next number of a per-session counter"),
	}
	missing := map[catalogue.Key]int{catalogue.KeyNotifying: 12, catalogue.KeyStateful: 1}
	text := suggestedProfile("http://127.0.0.1:1/mcp", tools, missing, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if _, err := target.Parse([]byte(text)); err != nil {
		t.Fatalf("the suggestion does not parse as it is: %v\n%s", err, text)
	}
	for _, want := range []string{"search, slow_task, next_number", "tools.notifying 12;", "name: slow_task", "name: next_number", "delay_ms: VALUE, steps: VALUE"} {
		if !strings.Contains(text, want) {
			t.Errorf("suggestion lacks %q:\n%s", want, text)
		}
	}
	// Uncomment the tools block, as a user would, and fill in the arguments.
	var block []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "# tools:":
			in = true
		case in && line == "":
			in = false
		}
		if in && !strings.HasPrefix(line, "#   #") {
			block = append(block, strings.ReplaceAll(strings.TrimPrefix(line, "# "), "VALUE", "1"))
		}
	}
	c, err := target.Parse([]byte(strings.Join(block, "\n")))
	if err != nil {
		t.Fatalf("the uncommented tools block does not parse: %v\n%s", err, strings.Join(block, "\n"))
	}
	if !c.Has(catalogue.KeyNotifying) || c.Tools.Notifying.Name != "slow_task" || c.Tools.Stateful.Name != "next_number" || !c.Has(catalogue.KeyResumable) {
		t.Errorf("uncommented block declares %+v", c.Tools)
	}
}

func TestMissingKeys(t *testing.T) {
	got := missingKeys([]report.Check{
		{Verdict: report.Skip, Message: serverchecks.NeedsKey + string(catalogue.KeyNotifying)},
		{Verdict: report.Skip, Message: serverchecks.NeedsKey + string(catalogue.KeyNotifying)},
		{Verdict: report.Skip, Message: "needs a restartable target: run with --server-cmd"},
		{Verdict: report.Pass},
	})
	if len(got) != 1 || got[catalogue.KeyNotifying] != 2 {
		t.Fatalf("missing keys %v, want tools.notifying 2", got)
	}
}
