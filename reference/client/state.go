package client

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// Storage keys: everything the client remembers across restarts (CLI-PERSIST).
const (
	KeyServerURL       = "mcp_server_url"
	KeySessionID       = "mcp_session_id"
	KeySessionAuth     = "mcp_session_auth" // "bearer" if the session was made with a token
	KeyProtocolVersion = "mcp_protocol_version"
	KeyBearerToken     = "mcp_bearer_token"
	KeyBearerOrigin    = "mcp_bearer_origin" // scheme://host:port the bearer token is for; sent nowhere else
	KeyLastEventID     = "mcp_last_event_id" // of the standalone GET stream
	KeyInFlight        = "mcp_inflight"      // JSON object: request id -> InFlightCall
	KeyLastResult      = "mcp_last_result"   // JSON LastResult
	KeyLogs            = "mcp_logs"          // JSON array of LogEntry, oldest first
	KeyConversation    = "mcp_conversation"  // JSON object: resume token field -> value
	KeyResumeHint      = "mcp_resume_hint"   // JSON ResumeHint not yet acted on
)

// sessionKeys describe one session; they go when it does.
var sessionKeys = []string{KeySessionID, KeySessionAuth, KeyProtocolVersion, KeyLastEventID, KeyInFlight}

// InFlightCall is a tool call whose result has not arrived yet: enough to
// fetch the rest of it after a restart.
type InFlightCall struct {
	RequestID     string          `json:"request_id"`
	Tool          string          `json:"tool"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ProgressToken string          `json:"progress_token"`
	SessionID     string          `json:"session_id"`
	// LastEventID is the last event of the call's stream that was handled.
	LastEventID string    `json:"last_event_id,omitempty"`
	Started     time.Time `json:"started"`
}

// LastResult is the most recent tool result.
type LastResult struct {
	Tool      string          `json:"tool"`
	RequestID string          `json:"request_id"`
	Result    json.RawMessage `json:"result"`
	At        time.Time       `json:"at"`
}

// LogEntry is one notifications/message the client received.
type LogEntry struct {
	EventID string          `json:"event_id,omitempty"`
	Params  json.RawMessage `json:"params"`
	At      time.Time       `json:"at"`
}

// state is a typed view of Storage. Writes return errors: a client that
// cannot remember where it is must not pretend it can resume.
type state struct{ s storage.Storage }

func (st state) get(key string) string {
	v, _ := st.s.Get(key)
	return v
}

func (st state) set(key, value string) error {
	if value == "" {
		return st.s.Remove(key)
	}
	return st.s.Set(key, value)
}

func (st state) getJSON(key string, v any) {
	if raw := st.get(key); raw != "" {
		// A value this client did not write is treated as absent.
		_ = json.Unmarshal([]byte(raw), v)
	}
}

func (st state) setJSON(key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.s.Set(key, string(data))
}

func (st state) removeAll(keys []string) error {
	for _, k := range keys {
		if err := st.s.Remove(k); err != nil {
			return err
		}
	}
	return nil
}

func (st state) inFlight() map[string]InFlightCall {
	m := map[string]InFlightCall{}
	st.getJSON(KeyInFlight, &m)
	return m
}

func (st state) putInFlight(rec InFlightCall) error {
	m := st.inFlight()
	m[rec.RequestID] = rec
	return st.setJSON(KeyInFlight, m)
}

func (st state) dropInFlight(id string) error {
	m := st.inFlight()
	if _, ok := m[id]; !ok {
		return nil
	}
	delete(m, id)
	if len(m) == 0 {
		return st.s.Remove(KeyInFlight)
	}
	return st.setJSON(KeyInFlight, m)
}

// latestInFlight returns the most recently started call in flight.
func (st state) latestInFlight() (InFlightCall, bool) {
	var out InFlightCall
	found := false
	for _, rec := range st.inFlight() {
		if !found || rec.Started.After(out.Started) {
			out, found = rec, true
		}
	}
	return out, found
}

func (st state) conversation() map[string]string {
	m := map[string]string{}
	st.getJSON(KeyConversation, &m)
	return m
}

// appendLog keeps the newest max entries; an event id already kept is not
// kept twice (a replay after a kill between two writes).
func (st state) appendLog(e LogEntry, max int) error {
	var logs []LogEntry
	st.getJSON(KeyLogs, &logs)
	if e.EventID != "" && slices.ContainsFunc(logs, func(o LogEntry) bool { return o.EventID == e.EventID }) {
		return nil
	}
	logs = append(logs, e)
	if len(logs) > max {
		logs = logs[len(logs)-max:]
	}
	return st.setJSON(KeyLogs, logs)
}

// Logs returns the stored notifications/message entries, oldest first.
func (c *Client) Logs() []LogEntry {
	var logs []LogEntry
	c.st.getJSON(KeyLogs, &logs)
	return logs
}

// LastResult returns the stored most recent tool result.
func (c *Client) LastResult() (LastResult, bool) {
	var r LastResult
	c.st.getJSON(KeyLastResult, &r)
	return r, r.RequestID != ""
}

// InFlight returns the stored calls whose results have not arrived.
func (c *Client) InFlight() []InFlightCall {
	var out []InFlightCall
	for _, rec := range c.st.inFlight() {
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b InFlightCall) int { return a.Started.Compare(b.Started) })
	return out
}

// persistError is a failed write to Storage. It stops what caused it: the
// client must not hand over events whose position it cannot remember.
type persistError struct {
	what string
	err  error
}

func (e *persistError) Error() string { return fmt.Sprintf("persisting %s: %v", e.what, e.err) }
func (e *persistError) Unwrap() error { return e.err }

func persistErr(what string, err error) error {
	if pe, ok := err.(*persistError); ok {
		return pe
	}
	return &persistError{what: what, err: err}
}
