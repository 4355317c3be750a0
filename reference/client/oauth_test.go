package client_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// oauthOptions returns client options for o with the authorization flow.
func (o *oauthServers) options(st storage.Storage) client.Options {
	opts := o.mcp.options(nil)
	opts.URL, opts.Storage = o.url, st
	opts.OAuth = &client.OAuthOptions{RedirectURL: "http://127.0.0.1:1/cb", Authorize: client.HeadlessAuthorize(opts.HTTPClient)}
	return opts
}

type storedGrant struct {
	ClientID, AccessToken, RefreshToken string `json:",omitempty"`
}

func grantIn(t *testing.T, st storage.Storage) storedGrant {
	t.Helper()
	raw, _ := st.Get(client.KeyOAuth)
	var g struct {
		ClientID     string `json:"client_id"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	json.Unmarshal([]byte(raw), &g)
	return storedGrant{g.ClientID, g.AccessToken, g.RefreshToken}
}

// TestOAuthFlow: the first 401 runs the authorization flow (protected
// resource metadata, authorization server metadata, registration, PKCE,
// the resource in both requests) and the request goes again with the
// token; the tokens are stored before they are used.
func TestOAuthFlow(t *testing.T) {
	o := newOAuthServers(t)
	st := storage.NewMemory()
	c := connectTo(t, o.options(st))
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	if got := o.counts(); got != "registered 1, authorized 1, exchanged 1, refreshed 0, refused 0 refreshes" {
		t.Fatalf("authorization server: %s", got)
	}
	if g := grantIn(t, st); g != (storedGrant{"cid", "A1", "R1"}) {
		t.Fatalf("stored grant %+v", g)
	}
	if sid := c.SessionID(); sid != "S1" {
		t.Fatalf("session %q", sid)
	}
}

// TestOAuthRefreshKeepsSession: a killed client's successor uses the
// stored token with no flow; when the server refuses it, one refresh with
// the stored refresh token gets a new one, the request is sent again, and
// the session stays (a 401 is not a lost session). A 404 afterwards makes
// a new session without touching the tokens (a lost session is not a 401).
func TestOAuthRefreshKeepsSession(t *testing.T) {
	o := newOAuthServers(t)
	st := storage.NewMemory()
	first := connectTo(t, o.options(st))
	first.Close() // the kill: the next client starts from Storage

	opts := o.options(st)
	opts.OAuth = nil // no flow: only the stored grant
	opts.Reconnect = client.Reuse
	c := connectTo(t, opts)
	if sid := c.SessionID(); sid != "S1" {
		t.Fatalf("rejoined session %q, want S1", sid)
	}
	o.revoke()
	if _, err := c.Request(ctx(t), "resources/list", map[string]any{}); err != nil {
		t.Fatalf("a request after the token was refused: %v", err)
	}
	if got := o.counts(); got != "registered 1, authorized 1, exchanged 1, refreshed 1, refused 0 refreshes" {
		t.Fatalf("authorization server: %s", got)
	}
	if g := grantIn(t, st); g != (storedGrant{"cid", "A2", "R2"}) {
		t.Fatalf("stored grant %+v", g)
	}
	if sid, n := c.SessionID(), len(o.mcp.requests(rpc("initialize"))); sid != "S1" || n != 1 {
		t.Fatalf("session %q after %d initialize, want S1 kept (the first client's only)", sid, n)
	}
	o.mcp.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if sid != "S1" {
			return false
		}
		http.Error(w, "session not found", http.StatusNotFound)
		return true
	}
	if _, err := c.Request(ctx(t), "resources/list", map[string]any{}); err != nil {
		t.Fatalf("a request after the session was lost: %v", err)
	}
	if sid := c.SessionID(); sid != "S2" {
		t.Fatalf("session %q after a 404, want the new S2", sid)
	}
	if got := o.counts(); got != "registered 1, authorized 1, exchanged 1, refreshed 1, refused 0 refreshes" {
		t.Fatalf("a 404 touched the tokens: %s", got)
	}
}

// TestOAuthNoLoop: a 401 that a refresh cannot cure fails the request
// after one refresh attempt and one retry (no authorization flow to run),
// with the session left as it was; a stored token the server never takes
// with the flow configured runs the flow once, not again and again.
func TestOAuthNoLoop(t *testing.T) {
	o := newOAuthServers(t)
	st := storage.NewMemory()
	connectTo(t, o.options(st)).Close()
	opts := o.options(st)
	opts.OAuth = nil
	opts.Reconnect = client.Reuse
	c := connectTo(t, opts)
	o.revoke()
	o.mu.Lock()
	o.failRefresh = true
	o.mu.Unlock()
	before := len(o.mcp.requests(nil))
	_, err := c.Request(ctx(t), "resources/list", map[string]any{})
	var he *client.HTTPError
	if !asHTTPError(err, &he) || he.Status != http.StatusUnauthorized || !strings.Contains(err.Error(), "no authorization flow") {
		t.Fatalf("a request the server keeps refusing: %v", err)
	}
	if got := o.counts(); got != "registered 1, authorized 1, exchanged 1, refreshed 0, refused 1 refreshes" {
		t.Fatalf("authorization server: %s", got)
	}
	if n := len(o.mcp.requests(nil)); n != before {
		t.Fatalf("%d requests reached the MCP server behind its 401s", n-before)
	}
	if sid, stored := c.SessionID(), mustGet(st, client.KeySessionID); sid != "S1" || stored != "S1" {
		t.Fatalf("session %q (stored %q) after a 401, want S1 untouched", sid, stored)
	}
}

func asHTTPError(err error, he **client.HTTPError) bool { return errors.As(err, he) }

func mustGet(st storage.Storage, key string) string {
	v, _ := st.Get(key)
	return v
}

// TestOAuthLoopback: LoopbackAuthorize shows the authorization URL and
// takes the code from the browser's visit to the redirect URL, where it
// listens meanwhile.
func TestOAuthLoopback(t *testing.T) {
	o := newOAuthServers(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	ln.Close() // LoopbackAuthorize listens there itself
	opts := o.options(storage.NewMemory())
	browser := &http.Client{}
	t.Cleanup(browser.CloseIdleConnections)
	var shown string
	opts.OAuth.RedirectURL = redirect
	opts.OAuth.Authorize = client.LoopbackAuthorize(redirect, func(u string) {
		shown = u
		go func() { // the user's browser: follows the redirect to the listener
			if resp, err := browser.Get(u); err == nil {
				resp.Body.Close()
			}
		}()
	})
	c := connectTo(t, opts)
	if !strings.HasPrefix(shown, o.asURL+"/authorize?") || !strings.Contains(shown, "code_challenge_method=S256") {
		t.Fatalf("shown authorization URL %q", shown)
	}
	if sid := c.SessionID(); sid != "S1" {
		t.Fatalf("session %q", sid)
	}
}

// TestOAuthStepUp: a 403 insufficient_scope after the first authorization
// runs the flow again for more scopes, once: a server that is never
// satisfied gets its 403 back, with no third authorization.
func TestOAuthStepUp(t *testing.T) {
	o := newOAuthServers(t)
	o.stepUp = true
	c := connectTo(t, o.options(storage.NewMemory()))
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatalf("a call that needs more scopes: %v", err)
	}
	o.mu.Lock()
	scope := o.lastScope
	o.never = true
	o.mu.Unlock()
	// The SDK's flow registers again each time it runs.
	if got := o.counts(); got != "registered 2, authorized 2, exchanged 2, refreshed 0, refused 0 refreshes" || !strings.Contains(scope, "mcp:write") {
		t.Fatalf("authorization server: %s, last scope %q", got, scope)
	}
	_, err := c.CallTool(ctx(t), "t", nil)
	var he *client.HTTPError
	if !asHTTPError(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("a call no scope satisfies: %v", err)
	}
	if got := o.counts(); got != "registered 3, authorized 3, exchanged 3, refreshed 0, refused 0 refreshes" {
		t.Fatalf("authorization server after the unsatisfiable call: %s, want one more authorization", got)
	}
}

// TestOAuthForbiddenSession: a 403 that asks for no scope (the stored
// session belongs to another principal) is not the authorizer's, even
// with no flow to run: the client starts a new session, and the tokens
// stay as they are.
func TestOAuthForbiddenSession(t *testing.T) {
	o := newOAuthServers(t)
	st := storage.NewMemory()
	connectTo(t, o.options(st)).Close()
	o.mcp.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if sid != "S1" {
			return false
		}
		http.Error(w, "not your session", http.StatusForbidden)
		return true
	}
	opts := o.options(st)
	opts.OAuth = nil // the stored grant only
	c := connectTo(t, opts)
	if sid := c.SessionID(); sid != "S2" {
		t.Fatalf("session %q, want a new one after the 403", sid)
	}
	if got := o.counts(); got != "registered 1, authorized 1, exchanged 1, refreshed 0, refused 0 refreshes" {
		t.Fatalf("authorization server: %s", got)
	}
}
