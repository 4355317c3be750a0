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
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// witness is a server that notes the credentials of every request that
// reaches it (Authorization, and a token request's secrets), then hands
// the request to next (nil: 404).
type witness struct {
	url  string
	mu   sync.Mutex
	seen []string
}

func newWitness(t *testing.T, next http.Handler) *witness {
	t.Helper()
	w := &witness{}
	hs := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		note := fmt.Sprintf("%s %s Authorization=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		if r.Method == http.MethodPost && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			body, _ := io.ReadAll(r.Body)
			note += " form=" + string(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		w.mu.Lock()
		w.seen = append(w.seen, note)
		w.mu.Unlock()
		if next == nil {
			http.NotFound(rw, r)
			return
		}
		next.ServeHTTP(rw, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	w.url = hs.URL
	return w
}

func (w *witness) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// redirector answers every request with a 307 to the same path at to.
func redirector(t *testing.T, to string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestCallBearerTokenStaysWithItsOrigin: the stored bearer token is sent
// only to the origin (scheme, host, port) it was given for. A run with
// another --url sends none and says so on stderr; back at the first
// origin the stored token is sent again. A token stored before origins
// were (no origin beside it) belongs to the stored URL's origin.
func TestCallBearerTokenStaysWithItsOrigin(t *testing.T) {
	a := newRefServer(t, server.Config{BearerTokens: map[string]string{"secret-a": "alice"}})
	b := newWitness(t, newRefServer(t, server.Config{}).srv)
	originA, originB := strings.TrimSuffix(a.url, "/"), strings.TrimSuffix(b.url, "/")
	notice := "the stored bearer token belongs to " + originA + " and was not sent to " + originB

	t.Run("stored with its origin", func(t *testing.T) {
		dir := t.TempDir()
		if _, code, stderr := callRun(t, "--url", a.url, "--state-dir", dir, "--bearer-token", "secret-a"); code != exitOK {
			t.Fatalf("A with the token: exit %d\n%s", code, stderr)
		}
		_, code, stderr := callRun(t, "--url", b.url, "--state-dir", dir)
		if code != exitOK {
			t.Fatalf("B: exit %d\n%s", code, stderr)
		}
		for _, r := range b.requests() {
			if !strings.HasSuffix(r, `Authorization=""`) {
				t.Errorf("B received %s", r)
			}
		}
		if !strings.Contains(stderr, notice) {
			t.Errorf("stderr %q, want it to say %q", stderr, notice)
		}
		// The token was kept for A, which needs it.
		if _, code, stderr := callRun(t, "--url", a.url, "--state-dir", dir); code != exitOK || strings.Contains(stderr, "was not sent") {
			t.Fatalf("back at A without --bearer-token: exit %d\n%s", code, stderr)
		}
	})

	t.Run("stored without an origin", func(t *testing.T) {
		dir := t.TempDir()
		st, err := storage.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		st.Set(client.KeyServerURL, a.url)
		st.Set(client.KeyBearerToken, "secret-a")
		st.Close()
		before := len(b.requests())
		_, code, stderr := callRun(t, "--url", b.url, "--state-dir", dir)
		if code != exitOK || !strings.Contains(stderr, notice) {
			t.Fatalf("B: exit %d, stderr %q; want success and %q", code, stderr, notice)
		}
		for _, r := range b.requests()[before:] {
			if !strings.HasSuffix(r, `Authorization=""`) {
				t.Errorf("B received %s", r)
			}
		}
	})
}

// TestCallRedirectKeepsCredentials: a redirect from the MCP URL to another
// port of the same host is another origin: call does not follow it, so the
// token goes nowhere but where the user sent it, and says why it failed. A
// redirect within the origin is followed, with the token.
func TestCallRedirectKeepsCredentials(t *testing.T) {
	other := newWitness(t, newRefServer(t, server.Config{}).srv)
	from := redirector(t, other.url)
	ls, code, stderr := callRun(t, "--url", from+"/mcp", "--state-dir", t.TempDir(), "--bearer-token", "secret-a")
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the other port received %d requests: %q", len(got), got)
	}
	if code != exitFail || !strings.Contains(stderr, "not followed") || !strings.Contains(stderr, other.url+"/mcp") {
		t.Errorf("exit %d, stderr %q, lines %+v; want a failure naming the redirect not followed", code, stderr, ls)
	}

	ref := newRefServer(t, server.Config{BearerTokens: map[string]string{"secret-a": "alice"}})
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
			return
		}
		ref.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(same.Close)
	if _, code, stderr := callRun(t, "--url", same.URL+"/old", "--state-dir", t.TempDir(), "--bearer-token", "secret-a", "echo", `{"text":"hi"}`); code != exitOK {
		t.Fatalf("a redirect within the origin: exit %d\n%s", code, stderr)
	}
}

// TestCallOAuthRedirectKeepsCredentials: the token endpoint of the
// authorization server redirects to another port. Neither the client's
// secret (Basic or in the form) nor the grant (code, verifier, client
// credentials) reaches it, in the client credentials grant and in the
// authorization code flow.
func TestCallOAuthRedirectKeepsCredentials(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"client credentials", []string{"--oauth-client-credentials", "--oauth-client-id", "cid", "--oauth-client-secret", "client-secret"}},
		{"authorization code", []string{"--oauth-headless", "--oauth-redirect", "http://127.0.0.1:1/cb", "--oauth-client-id", "cid", "--oauth-client-secret", "client-secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thief := newWitness(t, nil)
			var as, rs string
			asrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(map[string]any{"issuer": as, "authorization_endpoint": as + "/authorize", "token_endpoint": as + "/token",
						"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
						"grant_types_supported": []string{"authorization_code", "client_credentials"}})
				case "/authorize":
					back, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
					back.RawQuery = url.Values{"code": {"the-code"}, "state": {r.URL.Query().Get("state")}}.Encode()
					http.Redirect(w, r, back.String(), http.StatusFound)
				case "/token":
					http.Redirect(w, r, thief.url+"/token", http.StatusTemporaryRedirect)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(asrv.Close)
			rsrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(map[string]any{"resource": rs + "/mcp", "authorization_servers": []string{as}})
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs+`/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			}))
			t.Cleanup(rsrv.Close)
			as, rs = asrv.URL, rsrv.URL

			var stderr bytes.Buffer
			args := append([]string{"call", "--state-dir", t.TempDir(), "--url", rs + "/mcp", "--timeout", "10s", "--oauth"}, tc.args...)
			code := run(context.Background(), args, io.Discard, &stderr)
			if got := thief.requests(); len(got) != 0 {
				t.Errorf("the other port received %q", got)
			}
			if code != exitFail || !strings.Contains(stderr.String(), "307") {
				t.Errorf("exit %d, stderr %q; want 1, naming the 307 not followed", code, stderr.String())
			}
		})
	}
}

// TestCallLogHidesBearerToken: the exchange log (and the reports made of
// it) shows no character of a token, but tells two tokens apart.
func TestCallLogHidesBearerToken(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hs.Close()
	log := kit.NewLog()
	hc := &http.Client{Transport: &kit.Recorder{Base: http.DefaultTransport, Log: log}}
	for _, tok := range []string{"Bearer alice-token", "Bearer alice-token", "Bearer alice-other", "DPoP alice-token", "alice-bare"} {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/mcp", nil)
		req.Header.Set("Authorization", tok)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	text := log.String()
	if strings.Contains(text, "alice") || strings.Contains(text, "al…") {
		t.Fatalf("the log shows a token:\n%s", text)
	}
	var sums []string
	for _, l := range strings.Split(text, "\n") {
		if _, after, ok := strings.Cut(l, " Authorization="); ok {
			sums = append(sums, after)
		}
	}
	if len(sums) != 5 || sums[0] != sums[1] || sums[1] == sums[2] || !strings.HasPrefix(sums[0], `"Bearer …"`) || !strings.HasPrefix(sums[3], `"DPoP …"`) {
		t.Fatalf("Authorization summaries %q: want the scheme, no token, and the same summary for the same token only", sums)
	}
	if got := kit.AuthSummary(http.Header{}); got != "" {
		t.Errorf("no Authorization: %q", got)
	}
}
