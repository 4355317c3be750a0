package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestLongOperation: each step sends progress (with a token) and a log line,
// in order on the call's stream, then the result.
func TestLongOperation(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	resp, err := e.c.Call(e.ctx(), sid, "tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 3, "interval_ms": 0}, "tok"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := resp.Messages()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		switch {
		case m.Method != "":
			var p struct {
				Progress float64
				Data     string
			}
			json.Unmarshal(m.Params, &p)
			got = append(got, fmt.Sprintf("%s %v%s", m.Method, p.Progress, p.Data))
		default:
			text, err := wire.ResultText(m.Result)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, text)
		}
	}
	want := []string{
		"notifications/progress 1", "notifications/message 0step 1 of 3",
		"notifications/progress 2", "notifications/message 0step 2 of 3",
		"notifications/progress 3", "notifications/message 0step 3 of 3",
		"completed 3 steps",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without a progress token: only log lines.
	text := e.tool(e.c, sid, "long_operation", map[string]any{"steps": 1, "interval_ms": 0})
	if text != "completed 1 steps" {
		t.Fatalf("result %q", text)
	}
}

// TestToolArgumentErrors: bad arguments are tool errors with a reason, not crashes.
func TestToolArgumentErrors(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"long_operation", map[string]any{"steps": 0, "interval_ms": 0}, "steps must be between 1 and 10000"},
		{"long_operation", map[string]any{"steps": 1, "interval_ms": -5}, "interval_ms must be between"},
		// Would wrap to 0.45 ms if converted to a Duration before the check.
		{"long_operation", map[string]any{"steps": 1, "interval_ms": 18446744073710}, "interval_ms must be between"},
		{"job_start", map[string]any{"steps": 1, "interval_ms": 18446744073710}, "interval_ms must be between"},
		{"long_operation", map[string]any{"steps": 10000, "interval_ms": 60000}, "at most 1h0m0s"},
		{"job_start", map[string]any{"steps": 61, "interval_ms": 60000}, "at most 1h0m0s"},
		{"job_start", map[string]any{"steps": 1, "interval_ms": 0, "resume_token": "forged"}, "unknown or expired"},
		{"job_get", map[string]any{"job_id": "nope"}, "unknown job"},
	} {
		_, err := e.c.ToolText(e.ctx(), sid, tc.tool, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

type jobSnapshot struct {
	JobID          string `json:"job_id"`
	ConversationID string `json:"conversation_id"`
	Turn           int    `json:"turn"`
	Status         string `json:"status"`
	Result         string `json:"result"`
	ResumeToken    string `json:"resume_token"`
}

// runJob starts a job on sid and polls job_get until it completes.
func (e *env) runJob(c *wire.Client, sid, token string) jobSnapshot {
	e.t.Helper()
	args := map[string]any{"steps": 2, "interval_ms": 0}
	if token != "" {
		args["resume_token"] = token
	}
	var start struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(e.tool(c, sid, "job_start", args)), &start); err != nil || start.JobID == "" {
		e.t.Fatalf("job_start: %v %+v", err, start)
	}
	var snap jobSnapshot
	deadline := time.Now().Add(10 * time.Second)
	for snap.Status != "completed" {
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s never completed: %+v", start.JobID, snap)
		}
		e.clock.Step(0) // fire zero-length step timers
		if err := json.Unmarshal([]byte(e.tool(c, sid, "job_get", map[string]any{"job_id": start.JobID})), &snap); err != nil {
			e.t.Fatal(err)
		}
	}
	return snap
}

// TestJobResumeAcrossSessions: the conversation outlives its MCP session;
// job_start with the resume token continues it from a new session.
func TestJobResumeAcrossSessions(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	first := e.runJob(e.c, sid, "")
	if first.Turn != 1 || first.ResumeToken == "" || !strings.Contains(first.Result, "turn 1") {
		t.Fatalf("first job: %+v", first)
	}
	// The session expires.
	e.clock.Step(testIdle + 1)
	e.srv.Reap()
	e.clock.Step(testGrace)
	e.alive(0)
	sid2 := e.connect(e.c)
	second := e.runJob(e.c, sid2, first.ResumeToken)
	if second.Turn != 2 || second.ConversationID != first.ConversationID {
		t.Fatalf("resumed job: %+v, want turn 2 of conversation %s", second, first.ConversationID)
	}
	third := e.runJob(e.c, sid2, second.ResumeToken)
	if third.Turn != 3 {
		t.Fatalf("third job: %+v", third)
	}
}
