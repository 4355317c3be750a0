package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/target"
)

// advertisedTool is a tool as tools/list describes it.
type advertisedTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"inputSchema"`
	Execution struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

// taskTools are the tools that declare they run as tasks.
func taskTools(tools []advertisedTool) []advertisedTool {
	var out []advertisedTool
	for _, t := range tools {
		if s := t.Execution.TaskSupport; s == "optional" || s == "required" {
			out = append(out, t)
		}
	}
	return out
}

// args are the tool's argument names, sorted.
func (t advertisedTool) args() []string {
	out := make([]string, 0, len(t.InputSchema.Properties))
	for a := range t.InputSchema.Properties {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// listTools opens a session, lists the target's tools (every page) and
// deletes the session.
func listTools(ctx context.Context, url, version string, cfg *target.Profile) ([]advertisedTool, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	c := wire.New(url)
	c.ProtocolVersion = version
	c.Header = cfg.RequestHeader()
	call := func(params map[string]any) (*wire.Response, error) {
		return c.CallModern(ctx, "tools/list", params, nil)
	}
	if !wire.Revision(version).Sessionless() { // tools/list follows initialize
		sid, err := c.Connect(ctx)
		if ie := new(wire.InitializedError); errors.As(err, &ie) {
			// A notification answered other than 202 is JSONRPC-NOTIFY-202's
			// finding; the session may serve tools/list all the same.
			sid, err = ie.SessionID, nil
		}
		if err != nil {
			return nil, fmt.Errorf("initialize at %s: %w", url, err)
		}
		if sid != "" {
			defer c.Delete(context.WithoutCancel(ctx), sid)
		}
		call = func(params map[string]any) (*wire.Response, error) { return c.Call(ctx, sid, "tools/list", params) }
	}
	var tools []advertisedTool
	cursor := ""
	for range 100 { // a bound on pages
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		resp, err := call(params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if resp.Status != http.StatusOK {
			return nil, fmt.Errorf("tools/list: HTTP %d: %s", resp.Status, excerpt(resp.Body))
		}
		m, err := resp.Result()
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("tools/list: %v", m.Error)
		}
		var page struct {
			Tools      []advertisedTool `json:"tools"`
			NextCursor string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &page); err != nil {
			return nil, fmt.Errorf("tools/list result: %w", err)
		}
		tools = append(tools, page.Tools...)
		if len(tools) > maxTools { // bound lists the first maxTools and says so
			break
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			break
		}
		cursor = page.NextCursor
	}
	return tools, nil
}

// Words that make a tool a likely candidate for a profile key.
var (
	notifyingWords = []string{"progress", "long", "slow", "stream", "notif", "step", "interval", "delay", "sleep", "wait", "count"}
	statefulWords  = []string{"counter", "increment", "incr", "state", "session", "count", "next"}
)

// candidates returns the tools whose name, description or argument names
// contain one of words, most matches first.
func candidates(tools []advertisedTool, words []string) []advertisedTool {
	type scored struct {
		t advertisedTool
		n int
	}
	var out []scored
	for _, t := range tools {
		text := strings.ToLower(t.Name + " " + t.Description)
		for _, arg := range t.args() {
			text += " " + strings.ToLower(arg)
		}
		n := 0
		for _, w := range words {
			if strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{t, n})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].n > out[j].n })
	ts := make([]advertisedTool, len(out))
	for i, s := range out {
		ts[i] = s.t
	}
	return ts
}

// enabling is what the profile keys a run lacked would add: for each key,
// the checks it alone would enable; and the checks that lack more than
// one key, or a flag as well, by all they lack ("tools.notifying +
// --replica-url"), so no key is credited with a check it cannot enable.
type enabling struct {
	alone, more map[string]int
}

// enablingOf sorts the entries, checks skipped for an unmet
// prerequisite, by the keys and flags each lacks; entries that lack no
// key are left out.
func enablingOf(entries []catalogue.Entry, has func(catalogue.Key) bool, restartable, replicated bool) enabling {
	en := enabling{alone: map[string]int{}, more: map[string]int{}}
	for _, e := range entries {
		keys, flags := e.Missing(has, restartable, replicated)
		switch {
		case len(keys) == 0:
		case len(keys) == 1 && len(flags) == 0:
			en.alone[string(keys[0])]++
		default:
			parts := make([]string, 0, len(keys)+len(flags))
			for _, k := range keys {
				parts = append(parts, string(k))
			}
			en.more[strings.Join(append(parts, flags...), " + ")]++
		}
	}
	return en
}

// missingKeys is what the keys the run lacked would enable, from the
// checks it skipped for an unmet prerequisite.
func missingKeys(checks []report.Check, has func(catalogue.Key) bool, restartable, replicated bool) enabling {
	var es []catalogue.Entry
	for _, c := range checks {
		if c.Verdict != report.Skip || !c.Cause.Unmet() {
			continue
		}
		if e, ok := suites.Lookup(c.ID); ok {
			es = append(es, e)
		}
	}
	return enablingOf(es, has, restartable, replicated)
}

func (en enabling) total() int {
	n := 0
	for _, m := range []map[string]int{en.alone, en.more} {
		for _, c := range m {
			n += c
		}
	}
	return n
}

// counted renders "a 2, b 1" in name order.
func counted(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// String is the summary a run prints, one line each.
func (en enabling) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d checks were skipped for want of a target-profile key.\n", en.total())
	if len(en.alone) > 0 {
		fmt.Fprintf(&b, "Checks each key alone would enable: %s.\n", counted(en.alone))
	}
	if len(en.more) > 0 {
		fmt.Fprintf(&b, "Checks that need more than one key, or a flag too: %s.\n", counted(en.more))
	}
	return b.String()
}

// wroteProfile says where the suggested profile went.
const wroteProfile = "A profile to edit, with the tools the server advertises: %s\n"

// Bounds on what a suggestion takes from the target's tools/list, so
// that a huge or hostile list still makes a profile one can read; what is
// left out is noted in the profile.
const (
	maxTools   = 200
	maxNameLen = 256 // bytes, of a tool or argument name (MCP asks for at most 128 characters)
	maxArgs    = 32  // argument names shown for a tool
	maxDescLen = 4096
)

// bound keeps the first maxTools tools with a name of 1 to maxNameLen
// bytes, and of each its first maxArgs argument names of at most
// maxNameLen bytes; notes say what it left out.
func bound(tools []advertisedTool) (kept []advertisedTool, notes []string) {
	if len(tools) > maxTools {
		tools = tools[:maxTools]
		notes = append(notes, fmt.Sprintf("The server listed more than %d tools: the rest are left out.", maxTools))
	}
	names, args := 0, 0
	for _, t := range tools {
		if t.Name == "" || len(t.Name) > maxNameLen {
			names++
			continue
		}
		all := t.args()
		props := make(map[string]json.RawMessage, min(len(all), maxArgs))
		for _, a := range all {
			if len(a) > maxNameLen || len(props) == maxArgs {
				args++
				continue
			}
			props[a] = t.InputSchema.Properties[a]
		}
		t.InputSchema.Properties = props
		// The description only picks candidates; it is not written.
		t.Description = t.Description[:min(len(t.Description), maxDescLen)]
		kept = append(kept, t)
	}
	if names > 0 {
		notes = append(notes, fmt.Sprintf("%d %s left out: a name empty or longer than %d bytes.", names, plural(names, "tool", "tools"), maxNameLen))
	}
	if args > 0 {
		notes = append(notes, fmt.Sprintf("%d argument %s left out: longer than %d bytes, or past a tool's first %d.", args, plural(args, "name", "names"), maxNameLen, maxArgs))
	}
	return kept, notes
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// QuoteYAML is s as a YAML double-quoted scalar, written by the YAML
// encoder: one line, with every line break and control character escaped,
// read back as s in any context, and safe inside a comment. Text a target
// sends goes into a profile only through it (or argsOf), so that none can
// end a comment or start a key.
func QuoteYAML(s string) string {
	b, err := yaml.Marshal(quotedNode(s))
	if err != nil {
		// Not expected of valid UTF-8; Go's ASCII quoting uses only
		// escapes YAML's double quotes share.
		return strconv.QuoteToASCII(s)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func quotedNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: strings.ToValidUTF8(s, "\uFFFD")}
}

// suggestedProfile renders a target profile to edit: the advertised tools,
// likely candidates for the notifying and stateful tools, and every other
// key commented out with what it is for. It parses as it is (all keys
// commented out) and after any block is uncommented and filled in. Every
// name the target sent is a YAML value of its own (QuoteYAML).
func suggestedProfile(url string, tools []advertisedTool, missing enabling, now time.Time) string {
	tools, notes := bound(tools)
	var b strings.Builder
	fmt.Fprintf(&b, "# Target profile suggested by mcp-conform for %s on %s.\n", QuoteYAML(url), now.UTC().Format(time.DateOnly))
	b.WriteString("# Every key is commented out: uncomment what is true of the server and fill it in,\n")
	b.WriteString("# then run: mcp-conform server --url URL --target-profile THIS_FILE\n")
	if len(missing.alone) > 0 {
		fmt.Fprintf(&b, "# In the last run, checks each key alone would enable: %s.\n", counted(missing.alone))
	}
	if len(missing.more) > 0 {
		fmt.Fprintf(&b, "# Checks that need more than one key, or a flag too: %s.\n", counted(missing.more))
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "# %s\n", n)
	}
	if len(tools) == 0 {
		b.WriteString("# Tools the server advertises: none\n\n")
	} else {
		fmt.Fprintf(&b, "# Tools the server advertises (%d):\n", len(tools))
		for _, t := range tools {
			fmt.Fprintf(&b, "#   - %s\n", QuoteYAML(t.Name))
		}
		b.WriteString("\n")
	}

	b.WriteString("# tools:\n")
	b.WriteString("#   # A tool that sends notifications over time (with the progress token the\n")
	b.WriteString("#   # harness puts on the call): the stream, redirect and replay checks.\n")
	notifying := candidates(tools, notifyingWords)
	fmt.Fprintf(&b, "#   # Likely candidates: %s\n", describe(notifying))
	fmt.Fprintf(&b, "#   notifying:\n#     name: %s\n", first(notifying, "TOOL"))
	fmt.Fprintf(&b, "#     arguments: %s          # make it send at least 4 notifications\n", argsOf(notifying))
	b.WriteString("#     method: notifications/progress   # which notifications to count\n")
	b.WriteString("#     notifications: 5                 # how many one call sends\n")
	b.WriteString("#     interval: 500ms                  # time between two of them\n")
	b.WriteString("#   # A tool whose result changes with every call in a session (a counter):\n")
	b.WriteString("#   # RECREATE-STATE-KEPT.\n")
	stateful := candidates(tools, statefulWords)
	fmt.Fprintf(&b, "#   # Likely candidates: %s\n", describe(stateful))
	fmt.Fprintf(&b, "#   stateful:\n#     name: %s\n", first(stateful, "TOOL"))
	fmt.Fprintf(&b, "#     arguments: %s\n", argsOf(stateful))
	b.WriteString("#   # A tool whose result's structuredContent, or that of poll called with\n")
	b.WriteString("#   # it until then, carries a resume token under the name the 404\n")
	b.WriteString("#   # envelope's data.resume.via gives: RESUME-TOKEN-OWNER.\n")
	b.WriteString("#   resumable:\n#     name: TOOL\n#     arguments: {}\n")
	b.WriteString("#     poll: TOOL                       # optional: fetches the token\n")
	b.WriteString("#   # A tool that runs as a task with params.task (its execution.taskSupport\n")
	b.WriteString("#   # is optional or required) for about duration: the TASK-* checks.\n")
	tasks := taskTools(tools)
	if len(tasks) == 0 {
		b.WriteString("#   # No tool declares task support (execution.taskSupport).\n")
	} else {
		fmt.Fprintf(&b, "#   # Tools that declare task support: %s\n", describe(tasks))
	}
	fmt.Fprintf(&b, "#   task:\n#     name: %s\n", first(tasks, "TOOL"))
	fmt.Fprintf(&b, "#     arguments: %s          # make it run a second or two\n", argsOf(tasks))
	b.WriteString("#     duration: 1s                     # about how long one call runs\n\n")

	b.WriteString(`# The server's session and replay-store timings (Go durations), as it is
# configured for the run: the GRACE-* checks wait them out, so run a
# deployment with short ones.
# timings:
#   idle_threshold: 2s          # inactivity after which a session's grace period starts
#   grace_period: 0s            # 0s: an idle TTL alone, no grace period
#   reaper_interval: 500ms      # how often idle sessions are looked for
#   event_max_age: 5s           # events older than this cannot be replayed
#   event_cleanup_interval: 1s
#   write_timeout: 10s          # how long one write to a client may block (default 10s)

# Two principals' bearer tokens (the first one is used for every check):
# RECREATE-OWNER-ONLY, RESUME-TOKEN-OWNER; with refreshed_token, another
# valid token of the first principal (as a refresh gives it), AUTH-REFRESH-REJOIN.
# principals:
#   - {name: alice, token: TOKEN-A, refreshed_token: TOKEN-A2}
#   - {name: bob, token: TOKEN-B}

# Origin values: allowed is sent on every request; disallowed must get 403
# (default https://mcp-conform.invalid).
# origins:
#   allowed: http://localhost:3000
#   disallowed: https://evil.example

# A stale session id is answered with 404 plus a new, initialized
# session's id: RESTART-HINT.
# recovery_hint: true

# Headers sent on every request (an API key, say).
# headers:
#   X-Api-Key: KEY
`)
	return b.String()
}

// describe names the first few candidates, each with its argument names.
func describe(ts []advertisedTool) string {
	if len(ts) == 0 {
		return "none found by name; pick one of the tools above"
	}
	var parts []string
	for _, t := range ts[:min(len(ts), 4)] {
		args := t.args()
		for i, a := range args {
			args[i] = QuoteYAML(a)
		}
		parts = append(parts, fmt.Sprintf("%s(%s)", QuoteYAML(t.Name), strings.Join(args, ", ")))
	}
	return strings.Join(parts, ", ")
}

func first(ts []advertisedTool, dflt string) string {
	if len(ts) == 0 {
		return dflt
	}
	return QuoteYAML(ts[0].Name)
}

// argsOf is the first candidate's arguments as a YAML flow mapping, each
// name to a placeholder, written by the YAML encoder on one line.
func argsOf(ts []advertisedTool) string {
	if len(ts) == 0 {
		return "{}"
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, a := range ts[0].args() {
		m.Content = append(m.Content, quotedNode(a), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "VALUE"})
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return "{}"
	}
	return strings.TrimSuffix(string(b), "\n")
}

// SuggestProfile lists the tools of the MCP endpoint at url and returns a
// target profile to edit (see 'mcp-conform profile'). cfg supplies the
// headers and token to reach it; it may be empty. version may be a list of
// revisions (--protocol-version all).
func SuggestProfile(ctx context.Context, url, version string, cfg *target.Profile) (string, error) {
	if cfg == nil {
		cfg = &target.Profile{}
	}
	revs, err := parseRevisions(version)
	if err != nil {
		return "", err
	}
	// The first revision of the list the target speaks, sessions' era
	// first, and its tools listed at the revision it negotiated.
	var pr *probe
	for _, rev := range revs {
		if pr, err = preflight(ctx, url, rev, cfg, false); err == nil || unreachable(err) {
			break
		}
	}
	if err != nil {
		return "", &SetupError{err}
	}
	tools, err := listTools(ctx, url, pr.version, cfg)
	if err != nil {
		return "", err
	}
	return suggestedProfile(url, tools, enabling{}, time.Now()), nil
}
