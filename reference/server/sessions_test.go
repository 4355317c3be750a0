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

const envelopeBody = `{"jsonrpc":"2.0","error":{"code":-32003,"message":"Session expired; reinitialize","data":{"reason":"session_expired","resume":{"method":"job_start","via":"resume_token"}}},"id":null}`

// TestSessionIDs covers SESS-ID-CHARS and SESS-ID-ENTROPY.
func TestSessionIDs(t *testing.T) {
	e := newEnv(t, server.Config{})
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		sid := e.connect(e.c)
		if len(sid) < 22 {
			t.Errorf("session id %q: %d characters, too short for 128 bits", sid, len(sid))
		}
		for _, b := range []byte(sid) {
			if b < 0x21 || b > 0x7e {
				t.Fatalf("session id %q has byte %#x outside visible ASCII", sid, b)
			}
		}
		if seen[sid] {
			t.Fatalf("session id %q issued twice", sid)
		}
		seen[sid] = true
	}
}

// TestMissingSessionID covers SESS-MISSING-400 for POST, GET and DELETE.
func TestMissingSessionID(t *testing.T) {
	e := newEnv(t, server.Config{})
	e.connect(e.c)
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if got := e.send(e.c, method, "", e.c.Request("tools/list", nil)).Status; got != http.StatusBadRequest {
			t.Errorf("%s without session id: HTTP %d, want 400", method, got)
		}
	}
}

// TestUnknownSession covers SESS-UNKNOWN-404 and ENVELOPE-404 for every method.
func TestUnknownSession(t *testing.T) {
	e := newEnv(t, server.Config{})
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		resp := e.send(e.c, method, "NOSUCHSESSION", e.c.Request("tools/list", nil))
		if resp.Status != http.StatusNotFound {
			t.Fatalf("%s unknown id: HTTP %d, want 404", method, resp.Status)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s unknown id: Content-Type %q, want application/json", method, ct)
		}
		if string(resp.Body) != envelopeBody {
			t.Errorf("%s unknown id: body\n%s\nwant\n%s", method, resp.Body, envelopeBody)
		}
	}
}

// TestEnvelopeResumeHint covers ENVELOPE-RESUME-HINT: the hinted method is a
// listed tool and takes the argument named by via.
func TestEnvelopeResumeHint(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	resp := e.do(e.c, http.MethodPost, "GONE", e.c.Request("tools/list", nil))
	var env struct {
		Error struct {
			Data struct {
				Resume struct{ Method, Via string }
			}
		}
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		t.Fatal(err)
	}
	list, err := e.c.Call(e.ctx(), sid, "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := list.Result()
	if err != nil {
		t.Fatal(err)
	}
	var tools struct {
		Tools []struct {
			Name        string
			InputSchema struct{ Properties map[string]any }
		}
	}
	if err := json.Unmarshal(m.Result, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == env.Error.Data.Resume.Method {
			if _, ok := tool.InputSchema.Properties[env.Error.Data.Resume.Via]; !ok {
				t.Fatalf("tool %s has no argument %q", tool.Name, env.Error.Data.Resume.Via)
			}
			return
		}
	}
	t.Fatalf("resume method %q is not a listed tool", env.Error.Data.Resume.Method)
}

// TestPlainExpiredResponse covers --expired-response plain.
func TestPlainExpiredResponse(t *testing.T) {
	e := newEnv(t, server.Config{ExpiredResponse: server.ExpiredPlain})
	resp := e.do(e.c, http.MethodPost, "GONE", e.c.Request("tools/list", nil))
	want := `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
	if resp.Status != http.StatusNotFound || string(resp.Body) != want {
		t.Fatalf("got HTTP %d %s, want 404 %s", resp.Status, resp.Body, want)
	}
}

// TestDeleteThenReinitialize covers SESS-DELETE and SESS-REINIT-NEW.
func TestDeleteThenReinitialize(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	if got := e.do(e.c, http.MethodDelete, sid, nil).Status; got/100 != 2 {
		t.Fatalf("DELETE: HTTP %d, want 2xx", got)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if got := e.send(e.c, method, sid, e.c.Request("tools/list", nil)).Status; got != http.StatusNotFound {
			t.Errorf("%s after DELETE: HTTP %d, want 404", method, got)
		}
	}
	fresh := e.connect(e.c)
	if fresh == sid {
		t.Fatal("new session reused the deleted id")
	}
	if got := e.tool(e.c, fresh, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo on the new session = %q", got)
	}
	if e.srv.SessionCount() != 1 {
		t.Fatalf("SessionCount = %d, want 1", e.srv.SessionCount())
	}
}

// TestProtocolVersionHeader covers VER-INVALID-400.
func TestProtocolVersionHeader(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	// 2026-07-28 is served sessionless (modern_test.go).
	for _, v := range []string{"1999-01-01", "bogus", "9999-12-31"} {
		c := e.client()
		c.ProtocolVersion = v
		resp, err := c.Call(e.ctx(), sid, "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "unsupported") {
			t.Errorf("version %q: HTTP %d %s, want 400 naming the version", v, resp.Status, resp.Body)
		}
	}
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		c := e.client()
		c.ProtocolVersion = v
		if _, err := c.ToolText(e.ctx(), sid, "echo", map[string]any{"text": v}); err != nil {
			t.Errorf("version %q: %v", v, err)
		}
	}
}

// TestOrigin covers ORIGIN-403 with the default localhost policy and an allow-list.
func TestOrigin(t *testing.T) {
	cases := []struct {
		allowed []string
		origin  string
		want    int
	}{
		{nil, "http://evil.example", http.StatusForbidden},
		{nil, "null", http.StatusForbidden},
		{nil, "http://localhost:3000", http.StatusOK},
		{nil, "http://127.0.0.1", http.StatusOK},
		{nil, "http://[::1]:8080", http.StatusOK},
		{[]string{"https://app.example"}, "https://app.example", http.StatusOK},
		{[]string{"https://app.example"}, "http://localhost:3000", http.StatusForbidden},
		{[]string{"https://app.example"}, "https://app.example.evil", http.StatusForbidden},
	}
	for _, tc := range cases {
		e := newEnv(t, server.Config{AllowedOrigins: tc.allowed})
		c := e.client()
		c.Header.Set("Origin", tc.origin)
		resp, err := c.Initialize(e.ctx(), "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != tc.want {
			t.Errorf("allowed %v, Origin %q: HTTP %d, want %d", tc.allowed, tc.origin, resp.Status, tc.want)
		}
	}
}

// TestBadInput: malformed requests get clear 4xx answers, never a panic or 5xx.
func TestBadInput(t *testing.T) {
	e := newEnv(t, server.Config{MaxBodyBytes: 1 << 10})
	sid := e.connect(e.c)
	post := func(sid, contentType string, body string) *wire.Response {
		req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, sid, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	cases := []struct {
		name       string
		sid, ct    string
		body       string
		wantStatus int
		wantInBody string
	}{
		{"malformed JSON", sid, "application/json", `{"jsonrpc":`, 400, "Parse error"},
		{"malformed JSON without session", "", "application/json", `not json`, 400, "Parse error"},
		{"empty body", sid, "application/json", ``, 400, "empty body"},
		{"wrong content type", sid, "text/plain", `{}`, 415, "application/json"},
		{"session id with a space", "bad id", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400, "visible ASCII"},
		{"session id with non-ASCII", "caf\xc3\xa9", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400, "visible ASCII"},
		{"huge body", sid, "application/json", `{"jsonrpc":"2.0","id":1,"method":"echo","params":"` + strings.Repeat("x", 2<<10) + `"}`, 413, "larger than"},
		{"not a request", sid, "application/json", `{"jsonrpc":"2.0"}`, 400, ""},
		{"scalar", sid, "application/json", `42`, 400, "Parse error"},
	}
	for _, tc := range cases {
		resp := post(tc.sid, tc.ct, tc.body)
		if resp.Status != tc.wantStatus || !strings.Contains(string(resp.Body), tc.wantInBody) {
			t.Errorf("%s: HTTP %d %q, want %d containing %q", tc.name, resp.Status, resp.Body, tc.wantStatus, tc.wantInBody)
		}
	}
	// A long session id is refused before any lookup.
	if got := post(strings.Repeat("a", 300), "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).Status; got != 400 {
		t.Errorf("300-byte session id: HTTP %d, want 400", got)
	}
	if got := e.do(e.c, http.MethodPut, sid, nil).Status; got != http.StatusMethodNotAllowed {
		t.Errorf("PUT: HTTP %d, want 405", got)
	}
	// The session still works after all that.
	if got := e.tool(e.c, sid, "echo", map[string]any{"text": "ok"}); got != "ok" {
		t.Fatalf("echo = %q", got)
	}
}

// TestBearerAuth: tokens are required and bind a session to its principal.
func TestBearerAuth(t *testing.T) {
	e := newEnv(t, server.Config{BearerTokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}})
	if got := e.do(e.c, http.MethodPost, "", e.c.Request("initialize", e.c.InitializeParams())); got.Status != http.StatusUnauthorized || got.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: HTTP %d (WWW-Authenticate %q), want 401 with a challenge", got.Status, got.Header.Get("WWW-Authenticate"))
	}
	wrong := e.client()
	wrong.Header.Set("Authorization", "Bearer nope")
	if _, err := wrong.Connect(e.ctx()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("bad token: err = %v, want HTTP 401", err)
	}
	alice := e.client()
	alice.Header.Set("Authorization", "Bearer tok-alice")
	sid := e.connect(alice)
	if got := e.tool(alice, sid, "counter_increment", nil); got != "1" {
		t.Fatalf("counter = %s", got)
	}
}

// TestSessionQuotas: one principal cannot take every session (429 beyond its
// cap, others unaffected), and anonymous clients get new sessions at a
// bounded rate per address, refilled over time.
func TestSessionQuotas(t *testing.T) {
	e2, alice, mallory := twoPrincipalsWith(t, server.Config{MaxSessionsPerPrincipal: 2})
	a1 := e2.connect(alice)
	e2.connect(alice)
	if resp, err := alice.Initialize(e2.ctx(), ""); err != nil || resp.Status != http.StatusTooManyRequests {
		t.Fatalf("alice's third session: %v %v", resp, err)
	}
	e2.connect(mallory)
	if resp := e2.do(alice, http.MethodDelete, a1, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.Status)
	}
	e2.connect(alice) // a slot freed

	anon := newEnv(t, server.Config{AnonymousSessionRate: 1, AnonymousSessionBurst: 3})
	for range 3 {
		anon.connect(anon.c)
	}
	resp, err := anon.c.Initialize(anon.ctx(), "")
	if err != nil || resp.Status != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("fourth anonymous session at once: %v %v", resp, err)
	}
	anon.clock.Step(time.Second)
	anon.connect(anon.c)
}
