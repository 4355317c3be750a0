// Package contract is what `mcp-conform client` asks of a client under
// test, and how the client answers: the environment of each run, the
// actions, the JSON lines it prints and its exit status. A third-party
// client is adapted to it with a short wrapper script; the reference client
// speaks it through `mcp-conform client reference`.
//
// The harness starts the client as `/bin/sh -c 'CMD URL'` once or several
// times per scenario, always with the same state directory, and kills it
// with SIGKILL for a page refresh (sent to its process group and whatever
// it started) or interrupts it with SIGINT for a user cancel (sent to the
// client process only, the command the shell runs: what it started does
// not get it, and must be ended by the client's own handling).
package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Environment variables of one run.
const (
	// EnvScenario is the check ID the run belongs to (CLI-RESUME, ...),
	// or ScenarioMeasure. A client needs it only to decline a scenario it
	// cannot do.
	EnvScenario = "MCP_CONFORM_SCENARIO"
	// EnvStateDir is the scenario's state directory: the client's durable
	// storage (its localStorage). It is the same for every run of a
	// scenario and empty at the first.
	EnvStateDir = "MCP_CONFORM_STATE_DIR"
	// EnvAction is what to do (see the Action constants).
	EnvAction = "MCP_CONFORM_ACTION"
	// EnvTool and EnvArguments are the tool to call and its arguments (a
	// JSON object), for ActionCall.
	EnvTool      = "MCP_CONFORM_TOOL"
	EnvArguments = "MCP_CONFORM_ARGUMENTS"
	// EnvBearerToken, when set, is the token to send as Authorization:
	// Bearer and to store. A run without it uses the stored token, if any:
	// reconnecting never asks the user for credentials.
	EnvBearerToken = "MCP_CONFORM_BEARER_TOKEN"
	// EnvRun is the run's number within its scenario, from 1 (for logs).
	EnvRun = "MCP_CONFORM_RUN"
	// EnvProtocolVersion, when set, is the protocol revision to speak
	// (2026-07-28: no session, tasks through the io.modelcontextprotocol/tasks
	// extension). Unset: the newest revision with sessions, 2025-11-25.
	EnvProtocolVersion = "MCP_CONFORM_PROTOCOL_VERSION"
	// EnvOAuth, when set (to "1"), says the server requires OAuth: on a
	// 401 the client runs the MCP authorization flow (2025-11-25: protected
	// resource metadata, authorization server metadata, dynamic client
	// registration, authorization code with PKCE) and keeps the tokens in
	// the state directory. The authorization server approves at once: its
	// authorization endpoint redirects straight to the redirect URI with
	// the code, which the client takes without a browser. A client without
	// OAuth declines (ExitNotApplicable).
	EnvOAuth = "MCP_CONFORM_OAUTH"
)

// ScenarioMeasure is the scenario of the run the harness times before the
// checks, undisturbed (a list): every run's budget is derived from it, and
// the revision the client speaks is seen in it. It is not graded.
const ScenarioMeasure = "MEASURE"

// Vars lists every variable the harness sets; it clears them all first.
var Vars = []string{EnvScenario, EnvStateDir, EnvAction, EnvTool, EnvArguments, EnvBearerToken, EnvRun, EnvProtocolVersion, EnvOAuth}

// Action is what a run is asked to do.
type Action string

const (
	// ActionCall: connect (rejoining the stored session if there is one),
	// call the tool, print its notifications and result, exit 0. The call
	// need not carry a progressToken: the checks count the log messages
	// (notifications/message) the server sends whatever the token, and the
	// progress notifications only of a call that asked for them.
	ActionCall Action = "call"
	// ActionList: connect (rejoining the stored session), list the tools,
	// print them, exit 0.
	ActionList Action = "list"
	// ActionResume: rejoin the stored session and reattach to the call
	// that was in flight when the previous run was killed: print the
	// notifications not printed yet, then its result, exit 0.
	ActionResume Action = "resume"
	// ActionDisconnect: the user's explicit disconnect: end the stored
	// session (DELETE) and remove it from storage, exit 0.
	ActionDisconnect Action = "disconnect"
	// ActionShow: print what is stored (a LineStored line) without
	// contacting the server, exit 0.
	ActionShow Action = "show"
	// ActionTaskCall: connect (rejoining the stored session), call the
	// tool as a task (params.task in 2025-11-25; the tasks extension
	// declared in _meta in 2026-07-28), store the task id durably
	// at once, print a LineTask for its status when created and whenever
	// polling sees it change, poll no faster than its pollInterval, print
	// the result, exit 0. A task stored for the same tool and arguments is
	// polled, never created again. A client without tasks exits
	// ExitNotApplicable.
	ActionTaskCall Action = "task-call"
	// ActionTaskResume: poll the task the killed run stored to its result
	// (LineTask lines, then the result), exit 0.
	ActionTaskResume Action = "task-resume"
	// ActionListen (2026-07-28): connect, open a subscriptions/listen
	// stream that opts in to at least toolsListChanged, print every
	// notification it delivers, and keep the subscription: a stream that
	// ends without the listen's response (an unexpected disconnect) is
	// listened again, once per cut, after a short delay, never with two
	// streams open at once. A stream that ends with the response (the
	// server ended the subscription gracefully): exit 0. Otherwise the run
	// lasts until the harness ends it. A client that cannot listen exits
	// ExitNotApplicable.
	ActionListen Action = "listen"
)

// Actions lists every action.
var Actions = []Action{ActionCall, ActionList, ActionResume, ActionDisconnect, ActionShow, ActionTaskCall, ActionTaskResume, ActionListen}

// Exit statuses with a meaning beyond success (0) and failure (any other).
const (
	// ExitNotApplicable says the client cannot do this scenario or action:
	// the check is reported "not applicable" (skipped), never passed.
	ExitNotApplicable = 3
	// ExitCancelled is the conventional status of a process ended by the
	// user's Ctrl-C (128 + SIGINT); a cancel may also be reported by a line.
	ExitCancelled = 130
)

// Line types a client prints on stdout, one JSON object per line. Lines
// that are not JSON objects, and unknown types and fields, are ignored.
const (
	// LineStatus: {"type":"status","status":S,"session_id":ID,"reconnected":B}
	// for every connection status transition, S one of the Status values.
	LineStatus = "status"
	// LineNotification: {"type":"notification","method":M,"params":P,"event_id":E}
	// for every server notification handed to the application (event_id
	// is the SSE id it came with, if any).
	LineNotification = "notification"
	// LineResult: {"type":"result","result":R}, R the CallToolResult.
	LineResult = "result"
	// LineTools: {"type":"tools","tools":[{"name":N,...},...]} for ActionList.
	LineTools = "tools"
	// LineError: {"type":"error","error":TEXT,"cancelled":B}; cancelled
	// marks a user's cancel rather than a failure.
	LineError = "error"
	// LineCancelled: {"type":"cancelled"} is another way to report a cancel.
	LineCancelled = "cancelled"
	// LineStored: for ActionShow, {"type":"stored","server_url":U,
	// "session_id":ID,"last_event_id":E,"last_result":R,"logs":[P,...],
	// "task_id":T}: the stored server URL, session id, last event id
	// handled, last tool result, the params of the notifications/message
	// logged, oldest first, and the task a call runs as; absent fields mean
	// nothing is stored.
	LineStored = "stored"
	// LineNotApplicable: {"type":"not-applicable","reason":TEXT} declines
	// the scenario, like ExitNotApplicable.
	LineNotApplicable = "not-applicable"
	// LineTask: {"type":"task","task_id":ID,"status":S} when a call run
	// as a task (call --task) is created and when its status changes.
	LineTask = "task"
)

// Status values of LineStatus (CLI-STATUS).
const (
	StatusConnecting   = "connecting"
	StatusConnected    = "connected"
	StatusReconnecting = "reconnecting"
	StatusDisconnected = "disconnected"
)

// Run is one run's instructions, as the client reads them.
type Run struct {
	Scenario    string
	StateDir    string
	Action      Action
	Tool        string
	Arguments   json.RawMessage
	BearerToken string
	URL         string
	// ProtocolVersion is EnvProtocolVersion ("": the default).
	ProtocolVersion string
	// OAuth is EnvOAuth: the server requires the authorization flow.
	OAuth bool
}

// Env returns the variables that carry r (URL excluded: it is the last argument).
func (r Run) Env() []string {
	env := []string{EnvScenario + "=" + r.Scenario, EnvStateDir + "=" + r.StateDir, EnvAction + "=" + string(r.Action)}
	if r.Tool != "" {
		env = append(env, EnvTool+"="+r.Tool)
		args := r.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		env = append(env, EnvArguments+"="+string(args))
	}
	if r.BearerToken != "" {
		env = append(env, EnvBearerToken+"="+r.BearerToken)
	}
	if r.ProtocolVersion != "" {
		env = append(env, EnvProtocolVersion+"="+r.ProtocolVersion)
	}
	if r.OAuth {
		env = append(env, EnvOAuth+"=1")
	}
	return env
}

// FromEnv reads a run from the environment and the URL argument.
func FromEnv(url string) (Run, error) {
	r := Run{
		Scenario:    os.Getenv(EnvScenario),
		StateDir:    os.Getenv(EnvStateDir),
		Action:      Action(os.Getenv(EnvAction)),
		Tool:        os.Getenv(EnvTool),
		BearerToken: os.Getenv(EnvBearerToken),
		URL:         url,

		ProtocolVersion: os.Getenv(EnvProtocolVersion),
		OAuth:           os.Getenv(EnvOAuth) != "",
	}
	if a := os.Getenv(EnvArguments); a != "" {
		r.Arguments = json.RawMessage(a)
	}
	return r, r.Validate()
}

// Validate reports a run that cannot be carried out.
func (r Run) Validate() error {
	var missing []string
	if r.StateDir == "" {
		missing = append(missing, EnvStateDir)
	}
	if r.Action == "" {
		missing = append(missing, EnvAction)
	}
	if r.URL == "" {
		missing = append(missing, "the URL argument")
	}
	if len(missing) > 0 {
		return fmt.Errorf("client contract: missing %s", strings.Join(missing, ", "))
	}
	known := false
	for _, a := range Actions {
		known = known || a == r.Action
	}
	if !known {
		return fmt.Errorf("client contract: unknown %s %q", EnvAction, r.Action)
	}
	if r.Action == ActionCall && r.Tool == "" {
		return fmt.Errorf("client contract: %s=call needs %s", EnvAction, EnvTool)
	}
	if len(r.Arguments) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r.Arguments, &obj); err != nil || obj == nil {
			return fmt.Errorf("client contract: %s must be a JSON object, got %q", EnvArguments, r.Arguments)
		}
	}
	return nil
}

// Line is one line a client prints: the type says which fields it has.
// A client under test may print more fields and types; the harness reads
// only these. The reference client prints with this type too.
type Line struct {
	Type string `json:"type"`
	// status
	Status          string `json:"status,omitempty"`
	SessionID       string `json:"session_id,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	Reconnected     bool   `json:"reconnected,omitempty"`
	NewSession      bool   `json:"new_session,omitempty"`
	// notification: the stream it came on (standalone, or the call's), the
	// request it belongs to, and its SSE event id.
	Stream    string          `json:"stream,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	EventID   string          `json:"event_id,omitempty"`
	// task
	TaskID string `json:"task_id,omitempty"`
	// result
	Tool   string          `json:"tool,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	// tools
	Tools []ToolEntry `json:"tools,omitempty"`
	// error, not-applicable, status
	Error     string `json:"error,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// stored
	ServerURL   string            `json:"server_url,omitempty"`
	LastEventID string            `json:"last_event_id,omitempty"`
	LastResult  json.RawMessage   `json:"last_result,omitempty"`
	Logs        []json.RawMessage `json:"logs,omitempty"`
}

// ToolEntry is one tool of a tools line.
type ToolEntry struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// ParseLine decodes a stdout line; ok is false for a line that is not a
// JSON object with a type.
func ParseLine(s string) (l Line, ok bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return l, false
	}
	if err := json.Unmarshal([]byte(s), &l); err != nil || l.Type == "" {
		return Line{}, false
	}
	return l, true
}
