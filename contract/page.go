package contract

import (
	"encoding/json"
	"fmt"
)

// The page contract (`mcp-conform client --browser URL`): a run of the
// client under test is a load of the page in a tab of a real Chromium.
// Before the page's own scripts run, the harness defines the global
// PageGlobal, an object with
//
//	run       the run (a PageRun, frozen)
//	line(v)   print one contract line: an object, or its JSON text
//	exit(n)   end the run with exit status n (0 success; see the Exit constants)
//	oncancel  null; a page that can be cancelled sets it to a function,
//	          which the harness calls for the user's cancel (its Stop button)
//
// The run's state is the page's own storage (localStorage, IndexedDB), kept
// across the loads of one check and in no other check. A kill is the page
// torn down (its tab navigated away: fetches aborted, heap gone), and the
// next run is the page loaded again in the same tab.
const (
	// PageGlobal is the name of the object the harness defines.
	PageGlobal = "mcpConform"
	// PageLineBinding and PageExitBinding are the bindings line and exit
	// call (functions of one string, a JSON PageCall).
	PageLineBinding = "__mcpConformLine"
	PageExitBinding = "__mcpConformExit"
	// PageURLPlaceholder in the page's URL is replaced with the server's
	// URL, query-escaped.
	PageURLPlaceholder = "{url}"
)

// PageRun is a run as a page gets it: PageGlobal.run.
type PageRun struct {
	Scenario        string          `json:"scenario"`
	Action          Action          `json:"action"`
	Tool            string          `json:"tool,omitempty"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	BearerToken     string          `json:"bearerToken,omitempty"`
	URL             string          `json:"url"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	OAuth           bool            `json:"oauth,omitempty"`
	// Run is the run's number within its check.
	Run int `json:"run"`
}

// Page is r as PageGlobal.run of run n.
func (r Run) Page(n int) PageRun {
	return PageRun{Scenario: r.Scenario, Action: r.Action, Tool: r.Tool, Arguments: r.Arguments, BearerToken: r.BearerToken,
		URL: r.URL, ProtocolVersion: r.ProtocolVersion, OAuth: r.OAuth, Run: n}
}

// Run is the run p describes, its state in the page's storage named
// stateKey.
func (p PageRun) Contract(stateKey string) (Run, error) {
	r := Run{Scenario: p.Scenario, StateDir: stateKey, Action: p.Action, Tool: p.Tool, Arguments: p.Arguments,
		BearerToken: p.BearerToken, URL: p.URL, ProtocolVersion: p.ProtocolVersion, OAuth: p.OAuth}
	if r.URL == "" {
		return r, fmt.Errorf("%s.run has no url", PageGlobal)
	}
	return r, r.Validate()
}

// PageCall is what line and exit pass to their binding: the run they
// belong to (a late call of a page torn down is not the next run's), and
// the line's JSON text or the exit status.
type PageCall struct {
	Run  int    `json:"run"`
	Line string `json:"line,omitempty"`
	Code int    `json:"code"`
}
