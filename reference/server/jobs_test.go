package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// jobGet calls job_get and decodes the snapshot.
func (e *env) jobGet(c *wire.Client, sid, id string) jobSnapshot {
	e.t.Helper()
	var snap jobSnapshot
	if err := json.Unmarshal([]byte(e.tool(c, sid, "job_get", map[string]any{"job_id": id})), &snap); err != nil {
		e.t.Fatal(err)
	}
	return snap
}

// TestJobsOwnedByPrincipal: with alice's job id and resume token, mallory
// can neither read her result nor continue her conversation.
func TestJobsOwnedByPrincipal(t *testing.T) {
	e, alice, mallory := twoPrincipals(t)
	done := e.runJob(alice, e.connect(alice), "")
	msid := e.connect(mallory)
	if _, err := mallory.ToolText(e.ctx(), msid, "job_get", map[string]any{"job_id": done.JobID}); err == nil || !strings.Contains(err.Error(), "unknown job") {
		t.Fatalf("mallory reads alice's job: %v", err)
	}
	_, err := mallory.ToolText(e.ctx(), msid, "job_start", map[string]any{"steps": 1, "interval_ms": 0, "resume_token": done.ResumeToken})
	if err == nil || !strings.Contains(err.Error(), "unknown or expired") {
		t.Fatalf("mallory continues alice's conversation: %v", err)
	}
	if next := e.runJob(alice, e.connect(alice), done.ResumeToken); next.Turn != 2 {
		t.Fatalf("alice from a new session: %+v", next)
	}
}

// TestSessionEndCancelsJobs: the jobs a session started end with it,
// whether the client deletes it or it expires (idle threshold + grace).
func TestSessionEndCancelsJobs(t *testing.T) {
	for name, end := range map[string]func(t *testing.T, e *env, sid string){
		"DELETE": func(t *testing.T, e *env, sid string) {
			if resp := e.do(e.c, http.MethodDelete, sid, nil); resp.Status != http.StatusNoContent {
				t.Fatalf("DELETE: %d", resp.Status)
			}
		},
		"expiry": func(_ *testing.T, e *env, sid string) {
			e.clock.Step(testIdle + time.Millisecond)
			e.srv.Reap()
			e.clock.Step(testGrace)
			e.alive(0)
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, server.Config{})
			sid := e.connect(e.c)
			var start struct {
				JobID string `json:"job_id"`
			}
			// 100 steps of 1s: far longer than idle threshold + grace.
			json.Unmarshal([]byte(e.tool(e.c, sid, "job_start", map[string]any{"steps": 100, "interval_ms": 1000})), &start)
			if snap := e.jobGet(e.c, sid, start.JobID); snap.Status != "running" {
				t.Fatalf("job before the session ends: %+v", snap)
			}
			end(t, e, sid)
			if snap := e.jobGet(e.c, e.connect(e.c), start.JobID); snap.Status != "cancelled" || snap.ResumeToken != "" {
				t.Fatalf("job of an ended session: %+v", snap)
			}
		})
	}
}
