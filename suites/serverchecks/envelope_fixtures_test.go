package serverchecks

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// unknown sends tools/list with an unknown id and decodes the 404.
func (tg *fixtureServer) unknown() (hint string, body struct {
	Error struct {
		Code int `json:"code"`
		Data struct {
			Resume *struct{ Method, Via string } `json:"resume"`
		} `json:"data"`
	} `json:"error"`
}) {
	tg.t.Helper()
	resp := tg.send(tg.c, http.MethodPost, rand.Text(), tg.c.Request("tools/list", nil))
	if resp.Status != http.StatusNotFound {
		tg.t.Fatalf("unknown id: HTTP %d, want 404", resp.Status)
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		tg.t.Fatalf("404 body %q: %v", resp.Body, err)
	}
	return resp.SessionID(), body
}

func TestPlain404(t *testing.T) {
	t.Parallel()
	tg := serve(t, "plain-404")
	if _, body := tg.unknown(); body.Error.Code != -32001 {
		t.Fatalf("error code %d, want -32001", body.Error.Code)
	}
}

func TestResumeHintWrongArg(t *testing.T) {
	t.Parallel()
	tg := serve(t, "resume-hint-wrong-arg")
	_, body := tg.unknown()
	if r := body.Error.Data.Resume; r == nil || r.Method != "job_start" || r.Via != "token" {
		t.Fatalf("data.resume = %+v, want job_start via token", r)
	}
}

func TestNoRecoveryHint(t *testing.T) {
	t.Parallel()
	tg := serve(t, "no-recovery-hint")
	if hint, _ := tg.unknown(); hint != "" {
		t.Fatalf("the 404 names a new session %q", hint)
	}
}

// TestResumeTokensUnbound: bob continues alice's conversation with her
// resume token.
func TestResumeTokensUnbound(t *testing.T) {
	t.Parallel()
	tg := serve(t, "resume-tokens-unbound")
	alice, bob := tg.c, tg.client("bob-token")
	asid, bsid := tg.connect(alice), tg.connect(bob)
	job := func(c *wire.Client, sid, tool string, args map[string]any) map[string]any {
		t.Helper()
		resp := tg.send(c, http.MethodPost, sid, c.Request("tools/call", wire.ToolParams(tool, args, "")))
		m, err := resp.Result()
		var res struct {
			IsError    bool           `json:"isError"`
			Structured map[string]any `json:"structuredContent"`
		}
		if err != nil || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.IsError {
			t.Fatalf("%s: HTTP %d %v %+v %s", tool, resp.Status, err, m.Error, m.Result)
		}
		return res.Structured
	}
	started := job(alice, asid, "job_start", map[string]any{"steps": 1, "interval_ms": 0})
	var token string
	tg.waitUntil("alice's resume token", func() bool {
		token, _ = job(alice, asid, "job_get", started)["resume_token"].(string)
		return token != ""
	})
	stolen := job(bob, bsid, "job_start", map[string]any{"steps": 1, "interval_ms": 0, "resume_token": token})
	if stolen["job_id"] == nil {
		t.Fatalf("job_start with alice's token, by bob: %v, want a job", stolen)
	}
}
