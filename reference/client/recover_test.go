package client_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// jobSnapshot is job_get's structured result.
type jobSnapshot struct {
	JobID          string `json:"job_id"`
	ConversationID string `json:"conversation_id"`
	Turn           int    `json:"turn"`
	Status         string `json:"status"`
	ResumeToken    string `json:"resume_token"`
}

// runJob starts a one-step job and polls it to completion.
func runJob(t *testing.T, c *client.Client, args map[string]any) jobSnapshot {
	t.Helper()
	r, err := c.CallTool(ctx(t), "job_start", args)
	if err != nil {
		t.Fatalf("job_start: %v", err)
	}
	var started struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal(structured(t, r), &started); err != nil || started.JobID == "" {
		t.Fatalf("job_start result %s", r.Raw)
	}
	var snap jobSnapshot
	eventually(t, "the job to complete", func() bool {
		r, err := c.CallTool(ctx(t), "job_get", map[string]any{"job_id": started.JobID})
		if err != nil {
			t.Fatalf("job_get: %v", err)
		}
		json.Unmarshal(structured(t, r), &snap)
		return snap.Status == "completed"
	})
	return snap
}

func structured(t *testing.T, r *client.ToolResult) json.RawMessage {
	t.Helper()
	var s struct {
		Structured json.RawMessage `json:"structuredContent"`
	}
	json.Unmarshal(r.Raw, &s)
	return s.Structured
}

// TestEnvelope covers CLI-404-REINIT and CLI-ENVELOPE: the session is dropped
// under a connected client; its next job_start gets the -32003 envelope,
// and the client re-initializes, re-issues job_start with the stored resume
// token (resume.via), reports one "reconnected", and the conversation
// continues at turn 2.
func TestEnvelope(t *testing.T) {
	e := newEnv(t, server.Config{SSERetry: time.Hour}) // the GET stream waits: the call meets the 404
	rec := &recorder{}
	st := storage.NewMemory()
	c := e.newClient(e.options(st, rec))
	first := runJob(t, c, map[string]any{"steps": 1, "interval_ms": 0})
	if first.Turn != 1 || first.ResumeToken == "" {
		t.Fatalf("first job %+v", first)
	}
	raw, _ := st.Get(client.KeyConversation)
	var conv map[string]string
	json.Unmarshal([]byte(raw), &conv)
	if got := conv["resume_token"]; got != first.ResumeToken {
		t.Fatalf("stored conversation %s, want the job's resume token", raw)
	}
	old := c.SessionID()
	e.drop(old)

	second := runJob(t, c, map[string]any{"steps": 1, "interval_ms": 0})
	if second.ConversationID != first.ConversationID || second.Turn != 2 {
		t.Fatalf("after the envelope: %+v, want turn 2 of %s", second, first.ConversationID)
	}
	if c.SessionID() == old {
		t.Fatal("still on the dropped session")
	}
	starts := e.reqs.all()
	var sessions []string
	for _, r := range starts {
		if r.RPC == "tools/call job_start" {
			sessions = append(sessions, r.Session)
		}
	}
	if len(sessions) != 3 || sessions[1] != old || sessions[2] != c.SessionID() {
		t.Fatalf("job_start went to %v; want the old session, then once to the new one", sessions)
	}
	if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected)" {
		t.Fatalf("status trail %q, want one reconnect", got)
	}
}

// TestPlain404 covers CLI-404-REINIT without an envelope: any request (not
// only the five) that meets a 404 gets a new session and one retry.
func TestPlain404(t *testing.T) {
	e := newEnv(t, server.Config{ExpiredResponse: server.ExpiredPlain, SSERetry: time.Hour})
	rec := &recorder{}
	c := e.newClient(e.options(nil, rec))
	e.drop(c.SessionID())
	tools, err := c.ListTools(ctx(t))
	if err != nil || len(tools) != 5 {
		t.Fatalf("tools/list after a 404: %v %v", tools, err)
	}
	if n := e.reqs.count(func(r seenRequest) bool { return r.RPC == "tools/list" }); n != 2 {
		t.Fatalf("tools/list sent %d times, want 2", n)
	}
	r, err := c.CallTool(ctx(t), "counter_increment", nil)
	if err != nil || r.Result.Content == nil {
		t.Fatalf("call on the new session: %v", err)
	}
	if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected)" {
		t.Fatalf("status trail %q", got)
	}
}

// TestRestartHint covers CLI-RESTART-HINT: a 404 naming a new session id is
// adopted and the request retried at once, with no initialize of our own.
func TestRestartHint(t *testing.T) {
	e := newEnv(t, server.Config{RecoveryHint: true, SSERetry: time.Hour})
	rec := &recorder{}
	o := e.options(nil, rec)
	o.ReconnectWait = time.Hour // a fresh initialize would have to wait; adopting does not
	c := e.newClient(o)
	old := c.SessionID()
	e.drop(old)
	r, err := c.CallTool(ctx(t), "echo", map[string]any{"text": "after restart"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Raw); !strings.Contains(got, "after restart") {
		t.Fatalf("result %s", got)
	}
	if c.SessionID() == old || c.SessionID() == "" {
		t.Fatalf("session %q, want the hinted one", c.SessionID())
	}
	if n := e.reqs.count(func(r seenRequest) bool { return r.RPC == "initialize" }); n != 1 {
		t.Fatalf("%d initializes, want only the first", n)
	}
	if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected)" {
		t.Fatalf("status trail %q", got)
	}
}

// TestStatus covers CLI-STATUS end to end: connecting, connected,
// reconnecting, connected with the reconnected flag, disconnected.
func TestStatus(t *testing.T) {
	e := newEnv(t, server.Config{SSERetry: time.Hour})
	rec := &recorder{}
	c := e.newClient(e.options(nil, rec))
	e.drop(c.SessionID())
	if _, err := c.CallTool(ctx(t), "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected) disconnected" {
		t.Fatalf("status trail %q", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, ev := range rec.statuses {
		if ev.Status == client.Connected && (ev.SessionID == "" || ev.ProtocolVersion != "2025-11-25") {
			t.Fatalf("status %d: %+v, want session id and protocol version", i, ev)
		}
	}
}
