package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// oauthFront puts the reference server behind OAuth: an authorization
// server that approves at once and issues A1, A2, ... (refresh tokens R1,
// R2, ...), and a resource server that serves its protected-resource
// metadata and lets through the requests with a token it takes.
type oauthFront struct {
	url, as string
	mu      sync.Mutex
	valid   map[string]bool
	issued  int
	log     []string // authorize, code, refresh
}

func newOAuthFront(t *testing.T, ref http.Handler) *oauthFront {
	f := &oauthFront{valid: map[string]bool{}}
	as := httptest.NewServer(http.HandlerFunc(f.serveAS))
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": f.url, "authorization_servers": []string{f.as}})
			return
		}
		f.mu.Lock()
		ok := f.valid[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		f.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+strings.TrimSuffix(f.url, "/mcp")+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ref.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		for _, s := range []*httptest.Server{as, rs} {
			s.CloseClientConnections()
			s.Close()
		}
	})
	f.url, f.as = rs.URL+"/mcp", as.URL
	return f
}

func (f *oauthFront) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		json.NewEncoder(w).Encode(map[string]any{"issuer": f.as, "authorization_endpoint": f.as + "/authorize", "token_endpoint": f.as + "/token",
			"registration_endpoint": f.as + "/register", "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	case "/register":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"cid","token_endpoint_auth_method":"none"}`)
	case "/authorize":
		f.log = append(f.log, "authorize")
		back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"C"}, "state": {r.URL.Query().Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		grant := r.Form.Get("grant_type")
		if grant == "refresh_token" && r.Form.Get("refresh_token") != fmt.Sprintf("R%d", f.issued) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
		f.log = append(f.log, grant)
		f.issued++
		f.valid[fmt.Sprintf("A%d", f.issued)] = true
		fmt.Fprintf(w, `{"access_token":"A%d","token_type":"Bearer","expires_in":3600,"refresh_token":"R%d"}`, f.issued, f.issued)
	}
}

func (f *oauthFront) history() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, " ")
}

// TestCallOAuth: call --oauth runs the authorization flow on the first
// 401 and keeps the tokens in the state directory; the next process uses
// them without --oauth, and when the server refuses its token it refreshes
// it once and stays in its session.
func TestCallOAuth(t *testing.T) {
	ref := newRefServer(t, server.Config{})
	f := newOAuthFront(t, ref.srv)
	dir := t.TempDir()
	call := func(args ...string) []line {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"call", "--state-dir", dir}, args...), &stdout, &stderr); code != exitOK {
			t.Fatalf("call %v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		}
		return parseLines(t, stdout.String())
	}
	first := call("--url", f.url, "--oauth", "--oauth-headless", "--oauth-redirect", "http://127.0.0.1:1/cb", "echo", `{"text":"a"}`)
	if got := f.history(); got != "authorize authorization_code" {
		t.Fatalf("authorization server saw %q", got)
	}
	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	grant, _ := st.Get(client.KeyOAuth)
	st.Close()
	if !strings.Contains(grant, `"access_token":"A1"`) || !strings.Contains(grant, `"refresh_token":"R1"`) {
		t.Fatalf("stored grant %s", grant)
	}

	call("echo", `{"text":"b"}`) // the stored token, no flow
	f.mu.Lock()
	f.valid = map[string]bool{} // the server refuses A1 from now on
	f.mu.Unlock()
	third := call("echo", `{"text":"c"}`)
	if got := f.history(); got != "authorize authorization_code refresh_token" {
		t.Fatalf("authorization server saw %q, want one refresh and no new authorization", got)
	}
	sid := func(ls []line) string {
		for _, l := range ls {
			if l.Type == "status" && l.Status == "connected" {
				return l.SessionID
			}
		}
		return ""
	}
	if a, b := sid(first), sid(third); a == "" || a != b {
		t.Fatalf("session %q after the refresh, want the first call's %q", b, a)
	}
}

// TestCallOAuthUsage: the --oauth-* flags need --oauth, and are checked.
func TestCallOAuthUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-headless"}, "the --oauth-* flags need --oauth"},
		{[]string{"--oauth", "--oauth-client-secret", "s"}, "--oauth-client-secret needs --oauth-client-id"},
		{[]string{"--oauth", "--oauth-redirect", "localhost:3000"}, "--oauth-redirect must be an http(s) URL"},
		{[]string{"--oauth", "--oauth-client-metadata-url", "http://example.com/c.json"}, "must be an https URL with a path"},
		{[]string{"--oauth-dpop"}, "the --oauth-* flags need --oauth"},
		{[]string{"--oauth", "--oauth-client-credentials", "--oauth-client-id", "c"}, "needs --oauth-client-secret or --oauth-private-key"},
		{[]string{"--oauth", "--oauth-client-credentials", "--oauth-jwt-bearer", "f"}, "different grants"},
		{[]string{"--oauth", "--oauth-client-id", "c", "--oauth-private-key", "k.pem"}, "--oauth-private-key needs a grant without a user"},
		{[]string{"--oauth", "--oauth-client-credentials", "--oauth-client-id", "c", "--oauth-private-key", "/nonexistent/k.pem"}, "--oauth-private-key: open /nonexistent/k.pem"},
		{[]string{"--oauth", "--oauth-id-token", "t", "--oauth-client-id", "c"}, "--oauth-id-token needs --oauth-idp-issuer"},
		{[]string{"--oauth", "--oauth-idp-issuer", "https://idp.example"}, "the --oauth-idp-* flags need --oauth-id-token"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"call", "--state-dir", t.TempDir()}, tc.args...), io.Discard, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
