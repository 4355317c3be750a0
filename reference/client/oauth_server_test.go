package client_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// oauthServers are an authorization server and an MCP server (a scripted
// one) that wants its tokens: PRM discovery, dynamic registration, an
// authorization endpoint that approves at once, and a token endpoint that
// checks PKCE and the resource, issues A1, A2, ... with refresh tokens
// R1, R2, ... and counts what it did.
type oauthServers struct {
	t      *testing.T
	mcp    *scripted
	url    string // the MCP endpoint, /mcp
	asURL  string
	mu     sync.Mutex
	valid  map[string]bool // access tokens the MCP server takes
	issued int
	// counts
	registrations, authorizations, exchanges, refreshes, refreshFailures int
	failRefresh                                                          bool
	challenge, resource                                                  string
	// stepUp: tools/call wants a token with scope mcp:write (403
	// insufficient_scope otherwise); never: no token ever has enough.
	stepUp, never bool
	scopes        map[string]string // access token -> its scope
	lastScope     string            // of the last authorization request
}

func newOAuthServers(t *testing.T) *oauthServers {
	o := &oauthServers{t: t, mcp: newScripted(t), valid: map[string]bool{}, scopes: map[string]string{}}
	as := httptest.NewServer(http.HandlerFunc(o.serveAS))
	rs := httptest.NewServer(http.HandlerFunc(o.serveRS))
	t.Cleanup(func() {
		as.CloseClientConnections()
		as.Close()
		rs.CloseClientConnections()
		rs.Close()
	})
	o.asURL, o.url = as.URL, rs.URL+"/mcp"
	return o
}

func (o *oauthServers) serveRS(w http.ResponseWriter, r *http.Request) {
	base := strings.TrimSuffix(o.url, "/mcp")
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": o.url, "authorization_servers": []string{o.asURL}, "scopes_supported": []string{"mcp:basic"}})
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	o.mu.Lock()
	ok, scope, stepUp, never := o.valid[tok], o.scopes[tok], o.stepUp, o.never
	o.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
		return
	}
	if method, rest := peekMethod(r); strings.HasPrefix(method, "tools/call") && stepUp && (never || !strings.Contains(scope, "mcp:write")) {
		rest.Close()
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
		http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
		return
	} else {
		r.Body = rest
	}
	o.mcp.serve(w, r)
}

func (o *oauthServers) serveAS(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		json.NewEncoder(w).Encode(map[string]any{"issuer": o.asURL, "authorization_endpoint": o.asURL + "/authorize", "token_endpoint": o.asURL + "/token",
			"registration_endpoint": o.asURL + "/register", "response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"}, "authorization_response_iss_parameter_supported": true})
	case "/register":
		o.registrations++
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "cid", "redirect_uris": []string{"http://127.0.0.1:1/cb"}, "token_endpoint_auth_method": "none"})
	case "/authorize":
		o.authorizations++
		q := r.URL.Query()
		o.challenge, o.resource, o.lastScope = q.Get("code_challenge"), q.Get("resource"), q.Get("scope")
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"C"}, "state": {q.Get("state")}, "iss": {o.asURL}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if r.Form.Get("code") != "C" || base64.RawURLEncoding.EncodeToString(sum[:]) != o.challenge || r.Form.Get("resource") != o.url || o.resource != o.url {
				http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
				return
			}
			o.exchanges++
		case "refresh_token":
			if o.failRefresh || r.Form.Get("refresh_token") != fmt.Sprintf("R%d", o.issued) {
				o.refreshFailures++
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"invalid_grant"}`)
				return
			}
			o.refreshes++
		default:
			http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
			return
		}
		o.issued++
		access := fmt.Sprintf("A%d", o.issued)
		o.valid[access] = true
		o.scopes[access] = o.lastScope
		json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": fmt.Sprintf("R%d", o.issued)})
	default:
		http.NotFound(w, r)
	}
}

// revoke makes the MCP server refuse every token issued so far.
func (o *oauthServers) revoke() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.valid = map[string]bool{}
}

// counts returns registrations, authorizations, exchanges, refreshes.
func (o *oauthServers) counts() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprintf("registered %d, authorized %d, exchanged %d, refreshed %d, refused %d refreshes", o.registrations, o.authorizations, o.exchanges, o.refreshes, o.refreshFailures)
}
