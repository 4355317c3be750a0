package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	missing := enabling{alone: map[string]int{"tools.notifying": 12, "tools.stateful": 1}, more: map[string]int{"tools.notifying + --replica-url": 3}}
	text := suggestedProfile("http://127.0.0.1:1/mcp", tools, missing, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if _, err := target.Parse([]byte(text)); err != nil {
		t.Fatalf("the suggestion does not parse as it is: %v\n%s", err, text)
	}
	for _, want := range []string{"advertises (3):\n#   - \"search\"\n#   - \"slow_task\"\n#   - \"next_number\"\n", "alone would enable: tools.notifying 12, tools.stateful 1.", "flag too: tools.notifying + --replica-url 3.", `name: "slow_task"`, `name: "next_number"`, `{"delay_ms": VALUE, "steps": VALUE}`} {
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
	// Every tool entry writes its arguments, {} for a tool that takes none:
	// a profile without them led to calls with "arguments": null.
	if c.Tools.Notifying == nil || c.Tools.Stateful == nil || c.Tools.Resumable == nil || c.Tools.Task == nil {
		t.Fatalf("uncommented block lacks a tool entry: %+v", c.Tools)
	}
	entries := map[string]*target.Tool{"notifying": &c.Tools.Notifying.Tool, "stateful": c.Tools.Stateful,
		"resumable": &c.Tools.Resumable.Tool, "task": &c.Tools.Task.Tool}
	for key, tl := range entries {
		if tl.Arguments == nil {
			t.Errorf("tools.%s (%s) has no arguments in the suggestion", key, tl.Name)
		}
	}
	if args := c.Tools.Stateful.Arguments; len(args) != 0 {
		t.Errorf("tools.stateful next_number takes no arguments, suggested %v", args)
	}
	if n := strings.Count(text, "#     arguments: {"); n != len(entries) {
		t.Errorf("%d arguments lines for %d tool entries:\n%s", n, len(entries), text)
	}
}

// TestMissingKeys: a key is credited only with the checks it alone would
// enable; checks that lack more (another key, --server-cmd,
// --replica-url) are counted by all they lack, and checks skipped for
// other reasons not at all.
func TestMissingKeys(t *testing.T) {
	skip := func(id string, cause report.Cause, msg string) report.Check {
		return report.Check{ID: id, Verdict: report.Skip, Cause: cause, Message: msg}
	}
	checks := []report.Check{
		skip("GET-UNRELATED", report.NeedsProfileKey, serverchecks.NeedsKey+" tools.notifying"),
		skip("MSG-ONE-STREAM", report.NeedsProfileKey, serverchecks.NeedsKey+" tools.notifying"),
		skip("REPLAY-EVICTION", report.NeedsProfileKey, serverchecks.NeedsKey+"s tools.notifying and timings.event_max_age"),
		skip("REPLICA-NOTIFY-ROUTED", report.NeedsReplica, serverchecks.NoReplicas),
		skip("REPLICA-LOSS", report.NeedsRestart, serverchecks.NoRestart),
		skip("REPLICA-SESSION-SHARED", report.NeedsReplica, serverchecks.NoReplicas),
		skip("RESTART-404", report.NeedsRestart, serverchecks.NoRestart),
		skip("EVT-REPLAY-STREAM", report.NotOffered, "the target's SSE events carry no ids, so streams cannot be resumed"),
		{ID: "SESS-DELETE", Verdict: report.Pass},
	}
	none := func(catalogue.Key) bool { return false }
	got := missingKeys(checks, none, false, false)
	want := enabling{
		alone: map[string]int{"tools.notifying": 2},
		more: map[string]int{
			"tools.notifying + timings.event_max_age":        1,
			"tools.notifying + --replica-url":                1,
			"tools.notifying + --server-cmd + --replica-url": 1,
		},
	}
	if !maps.Equal(got.alone, want.alone) || !maps.Equal(got.more, want.more) || got.total() != 5 {
		t.Fatalf("missing keys %+v, want %+v", got, want)
	}
	text := got.String()
	for _, line := range []string{
		"5 checks were skipped for want of a target-profile key.",
		"Checks each key alone would enable: tools.notifying 2.",
		"Checks that need more than one key, or a flag too: tools.notifying + --replica-url 1, tools.notifying + --server-cmd + --replica-url 1, tools.notifying + timings.event_max_age 1.",
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("summary lacks %q:\n%s", line, text)
		}
	}
	// With replicas and a restartable target the replica check is the
	// key's alone.
	if got := missingKeys(checks[:4], none, true, true); got.alone["tools.notifying"] != 3 {
		t.Errorf("with --replica-url: %+v", got)
	}
}

// TestSuggestProfileBounds: from a server that lists tools without end,
// with names and argument names of any length, the suggestion takes the
// first maxTools tools, leaves out the names it cannot use, and says so.
func TestSuggestProfileBounds(t *testing.T) {
	long := strings.Repeat("n", maxNameLen+1)
	var pages atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		if r.Method != http.MethodPost || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "many", "version": "0"}}
		if m.Method == "tools/list" {
			n := pages.Add(1)
			var tools []advertisedTool
			if m.Params.Cursor == "" {
				args := []string{long}
				for i := range maxArgs + 3 {
					args = append(args, fmt.Sprintf("arg%02d", i))
				}
				tools = append(tools, tool(long, "progress"), tool("", "progress"), tool("wide", "progress", args...))
			}
			for i := range 150 {
				tools = append(tools, tool(fmt.Sprintf("t%d_%d", n, i), ""))
			}
			result = map[string]any{"tools": tools, "nextCursor": fmt.Sprint(n)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}))
	defer srv.Close()
	text, err := SuggestProfile(context.Background(), srv.URL, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := pages.Load(); n != 2 {
		t.Errorf("%d pages of tools/list asked for, want 2 (the first %d tools)", n, maxTools)
	}
	for _, want := range []string{
		fmt.Sprintf("# The server listed more than %d tools: the rest are left out.\n", maxTools),
		fmt.Sprintf("# 2 tools left out: a name empty or longer than %d bytes.\n", maxNameLen),
		fmt.Sprintf("# 4 argument names left out: longer than %d bytes, or past a tool's first %d.\n", maxNameLen, maxArgs),
		fmt.Sprintf("# Tools the server advertises (%d):\n", maxTools-2),
		`#   - "wide"` + "\n",
		`"arg31": VALUE}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("suggestion lacks %q", want)
		}
	}
	if strings.Contains(text, long) || strings.Contains(text, "arg32") {
		t.Errorf("suggestion holds a name it should leave out")
	}
	if _, err := target.Parse([]byte(text)); err != nil {
		t.Errorf("the suggestion does not parse: %v", err)
	}
}
