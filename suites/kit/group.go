package kit

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// maxOrigins bounds the event ids remembered for resumes.
const maxOrigins = 4096

// groups names the JSON-RPC request a message belongs to, so that a
// request, its notifications and its response share one group on the
// timeline, on whichever stream they arrive. A message names its request
// by id (a response) or progress token (a progress notification); one
// that names none (a log message, a priming event) takes its stream's:
// the request a POST carries, or for a GET resuming with Last-Event-ID,
// the group of the stream that id came from.
type groups struct {
	mu sync.Mutex
	// sessions numbers the session ids seen: "s1", "s2", so that the same
	// JSON-RPC id in two sessions makes two groups.
	sessions map[string]string
	// byToken maps a scope and a request's progress token to its group.
	byToken map[string]string
	// streams holds each exchange's scope and group, by lane.
	streams map[string]*streamGroup
	// origins maps a scope and an SSE event id to the group of the stream
	// that carried it.
	origins map[string]string
	// ledger, when the log's check joined one, learns the progress tokens
	// the check sends and reads (log is the check's).
	ledger *Ledger
	log    *Log
}

func (g *groups) setLedger(l *Ledger, log *Log) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ledger, g.log = l, log
}

type streamGroup struct {
	scope, group string
	// progress is the group of the stream's last event if that was a
	// progress notification of a request, else "".
	progress string
}

type rpcFields struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Token json.RawMessage `json:"progressToken"`
		Meta  struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// scope is what JSON-RPC ids are unique in: the session ("s1"), or for a
// request without one, its own exchange (lane).
func (g *groups) scope(session, lane string) string {
	if session == "" {
		return lane
	}
	if g.sessions == nil {
		g.sessions = map[string]string{}
	}
	s, ok := g.sessions[session]
	if !ok {
		s = fmt.Sprintf("s%d", len(g.sessions)+1)
		g.sessions[session] = s
	}
	return s
}

// request records exchange lane's request (its session, Last-Event-ID
// and body) and returns its group, which is also its stream's.
func (g *groups) request(lane, session, lastEventID, body string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := &streamGroup{scope: g.scope(session, lane)}
	var m rpcFields
	st.group, m = g.of(st.scope, body)
	if tok := tokenKey(m.Params.Meta.Token); tok != "" && g.ledger != nil && m.Method != "" {
		g.ledger.sent(g.log, tok)
	}
	if st.group == "" && lastEventID != "" {
		st.group = g.origins[st.scope+" "+lastEventID]
	}
	if g.streams == nil {
		g.streams = map[string]*streamGroup{}
	}
	g.streams[lane] = st
	return st.group
}

// event returns the group of a message read on exchange lane's stream (an
// SSE event's id and data, or a plain body), and remembers the event id's
// stream for a later resume.
func (g *groups) event(lane, id, data string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.streams[lane]
	if st == nil {
		st = &streamGroup{scope: lane}
	}
	grp, m := g.of(st.scope, data)
	method := m.Method
	if tok := tokenKey(m.Params.Token); tok != "" && g.ledger != nil && method == "notifications/progress" {
		g.ledger.read(g.log, tok)
	}
	switch {
	case grp != "":
	case method == "notifications/message" && st.progress != "":
		// MCP ties a log message to no request; a call's log message
		// right after its progress notification is taken as the call's.
		grp = st.progress
	default:
		grp = st.group
	}
	st.progress = ""
	if method == "notifications/progress" {
		st.progress = grp
	}
	if id != "" && st.group != "" && len(g.origins) < maxOrigins {
		if g.origins == nil {
			g.origins = map[string]string{}
		}
		g.origins[st.scope+" "+id] = st.group
	}
	return grp
}

// of returns the group of a JSON-RPC message (a request body or an SSE
// data field) in scope, "" for one that names no request, and its fields.
func (g *groups) of(scope, msg string) (string, rpcFields) {
	var m rpcFields
	msg = strings.TrimSpace(msg)
	if !strings.HasPrefix(msg, "{") || json.Unmarshal([]byte(msg), &m) != nil {
		return "", rpcFields{}
	}
	if g.byToken == nil {
		g.byToken = map[string]string{}
	}
	id := ""
	if len(m.ID) > 0 && string(m.ID) != "null" {
		id = "id " + Clip(string(m.ID), 40)
		if scope != "" {
			id = scope + " " + id
		}
	}
	if tok := Clip(string(m.Params.Meta.Token), 40); tok != "" && id != "" && m.Method != "" {
		g.byToken[scope+" "+tok] = id // a request with a progress token
	}
	if tok := Clip(string(m.Params.Token), 40); tok != "" && m.Method != "" && id == "" {
		if grp, ok := g.byToken[scope+" "+tok]; ok {
			return grp, m
		}
		return strings.TrimSpace(scope + " token " + tok), m
	}
	return id, m
}

// tokenKey is a progress token as the ledger keys it: a string token's
// text (however the JSON escaped it), another's JSON text; "" for none.
func tokenKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}
