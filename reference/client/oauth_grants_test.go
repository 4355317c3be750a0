package client_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// callWith connects with opts, calls a tool and returns the stored grant.
func callWith(t *testing.T, opts client.Options) storedGrant {
	t.Helper()
	c := connectTo(t, opts)
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatal(err)
	}
	return grantIn(t, opts.Storage)
}

// TestClientCredentialsSecret: on the 401 the client finds the metadata
// and asks for a token with the client credentials grant, authenticated
// with its secret as the authorization server lists (basic by default),
// for the resource and the scopes the server supports.
func TestClientCredentialsSecret(t *testing.T) {
	for _, tc := range []struct {
		methods []string
		basic   bool
	}{{nil, true}, {[]string{"client_secret_basic", "client_secret_post"}, true}, {[]string{"client_secret_post"}, false}} {
		t.Run(fmt.Sprint(tc.methods), func(t *testing.T) {
			g := newGrantServers(t)
			g.authMethods = tc.methods
			g.token = func(_ http.ResponseWriter, r *http.Request) (string, string, error) {
				id, secret, basic := r.BasicAuth()
				if !basic {
					id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
				}
				if basic != tc.basic || id != "cid" || secret != "s3cret" {
					return "", "", fmt.Errorf("invalid_client: basic %v, %q:%q", basic, id, secret)
				}
				return "CC1", "", want(r, map[string]string{"grant_type": "client_credentials", "resource": g.url, "scope": "mcp:tools"})
			}
			o := &client.OAuthOptions{ClientCredentials: true, ClientID: "cid", ClientSecret: "s3cret"}
			if got := callWith(t, g.options(storage.NewMemory(), o)); got.AccessToken != "CC1" || got.ClientID != "cid" {
				t.Fatalf("stored grant %+v", got)
			}
			if n, _ := g.requests(); n != 1 {
				t.Fatalf("%d token requests, want 1", n)
			}
		})
	}
}

// TestClientCredentialsPrivateKeyJWT: with a private key the client
// authenticates with private_key_jwt (RFC 7523): a JWT it signs, issued by
// and about its client id, for the authorization server's issuer; no
// secret. ECDSA and Ed25519 keys, read from PEM.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for name, key := range map[string]crypto.Signer{"ES256": ec, "EdDSA": ed} {
		t.Run(name, func(t *testing.T) {
			der, _ := x509.MarshalPKCS8PrivateKey(key)
			parsed, err := client.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
			if err != nil {
				t.Fatal(err)
			}
			g := newGrantServers(t)
			g.authMethods = []string{"private_key_jwt"}
			g.token = func(_ http.ResponseWriter, r *http.Request) (string, string, error) {
				if _, _, basic := r.BasicAuth(); basic || r.Form.Has("client_secret") {
					return "", "", errors.New("invalid_client: a secret with private_key_jwt")
				}
				_, c, err := verifyJWT(r.Form.Get("client_assertion"), key.Public())
				if err != nil {
					return "", "", fmt.Errorf("invalid_client: %v", err)
				}
				if exp, _ := c["exp"].(float64); c["iss"] != "cid" || c["sub"] != "cid" || c["aud"] != g.asURL || c["jti"] == nil || int64(exp) <= time.Now().Unix() {
					return "", "", fmt.Errorf("invalid_client: claims %v", c)
				}
				return "PK1", "", want(r, map[string]string{"grant_type": "client_credentials", "client_id": "cid",
					"client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "resource": g.url})
			}
			o := &client.OAuthOptions{ClientCredentials: true, ClientID: "cid", PrivateKey: parsed}
			if got := callWith(t, g.options(storage.NewMemory(), o)); got.AccessToken != "PK1" {
				t.Fatalf("stored grant %+v", got)
			}
		})
	}
}

// TestJWTBearerAssertion: the workload's assertion, asked for at the token
// request, goes in the JWT-bearer grant with the client id and no secret;
// a refusal fails the call with the server's error, after one request (no
// retry, no other grant).
func TestJWTBearerAssertion(t *testing.T) {
	g := newGrantServers(t)
	g.token = func(_ http.ResponseWriter, r *http.Request) (string, string, error) {
		if r.Form.Get("assertion") == "expired" {
			return "", "", errors.New("invalid_grant")
		}
		return "W1", "", want(r, map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
			"assertion": "workload-jwt", "client_id": "wl", "client_secret": "", "resource": g.url})
	}
	assertion := "workload-jwt"
	o := &client.OAuthOptions{ClientID: "wl", Assertion: func(context.Context) (string, error) { return assertion, nil }}
	if got := callWith(t, g.options(storage.NewMemory(), o)); got.AccessToken != "W1" {
		t.Fatalf("stored grant %+v", got)
	}

	assertion = "expired"
	c, err := client.New(g.options(storage.NewMemory(), o))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Connect(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("Connect with a refused assertion: %v, want the invalid_grant", err)
	}
	if n, _ := g.requests(); n != 2 {
		t.Fatalf("%d token requests, want 2 (one per client)", n)
	}
}

// TestEnterpriseManagedAuthorization: the ID token is exchanged at the
// identity provider (RFC 8693) for an ID-JAG for the authorization server
// and the resource, which the client presents in the JWT-bearer grant,
// authenticated with its own secret.
func TestEnterpriseManagedAuthorization(t *testing.T) {
	g := newGrantServers(t)
	g.authMethods = []string{"client_secret_basic"}
	g.idpToken = func(_ http.ResponseWriter, r *http.Request) (string, string, error) {
		return "JAG", "N_A", want(r, map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
			"subject_token": "IDT", "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
			"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag", "audience": g.asURL, "resource": g.url, "client_id": "idp-client"})
	}
	g.token = func(_ http.ResponseWriter, r *http.Request) (string, string, error) {
		if id, secret, _ := r.BasicAuth(); id != "cid" || secret != "s3cret" {
			return "", "", errors.New("invalid_client")
		}
		return "E1", "", want(r, map[string]string{"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "JAG", "resource": g.url})
	}
	o := &client.OAuthOptions{ClientID: "cid", ClientSecret: "s3cret", Enterprise: &client.EnterpriseOptions{
		IdPIssuer: g.idp, IdPClientID: "idp-client", IDToken: func(context.Context) (string, error) { return "IDT", nil }}}
	if got := callWith(t, g.options(storage.NewMemory(), o)); got.AccessToken != "E1" {
		t.Fatalf("stored grant %+v", got)
	}
	if tokens, idp := g.requests(); tokens != 1 || idp != 1 {
		t.Fatalf("%d token requests, %d exchanges, want 1 and 1", tokens, idp)
	}
}

// TestDPoP: the token request carries a proof (sent again with the nonce
// the authorization server asks for), the token comes back DPoP-bound,
// and every MCP request presents it with the DPoP scheme and a fresh proof
// of the same key with its hash (sent again with the nonce the MCP server
// asks for). The key is stored with the grant: a later client with no
// flow uses the stored token with the same key.
func TestDPoP(t *testing.T) {
	g := newGrantServers(t)
	var mu sync.Mutex
	jtis := map[any]bool{}
	var asChallenges, rsChallenges int
	g.token = func(w http.ResponseWriter, r *http.Request) (string, string, error) {
		c, thumb, err := proofClaims(r.Header.Get("DPoP"), "POST", g.asURL+"/token")
		if err != nil {
			return "", "", fmt.Errorf("invalid_dpop_proof: %v", err)
		}
		if c["nonce"] != "as-nonce" {
			asChallenges++
			w.Header().Set("DPoP-Nonce", "as-nonce")
			return "", "", errors.New("use_dpop_nonce")
		}
		return "D-" + thumb, "DPoP", nil
	}
	g.resource = func(r *http.Request, w http.ResponseWriter) bool {
		base := strings.TrimSuffix(g.url, "/mcp")
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP ")
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return false
		}
		c, thumb, err := proofClaims(r.Header.Get("DPoP"), r.Method, g.url)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil || tok != "D-"+thumb || c["ath"] != ath(tok) || jtis[c["jti"]]:
			t.Errorf("MCP request %s with token %q: proof %v %v (a jti seen before: %v)", r.Method, tok, c, err, jtis[c["jti"]])
			http.Error(w, "bad proof", http.StatusUnauthorized)
			return false
		case c["nonce"] != "rs-nonce":
			jtis[c["jti"]] = true
			rsChallenges++
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.Header().Set("DPoP-Nonce", "rs-nonce")
			http.Error(w, `{"error":"use_dpop_nonce"}`, http.StatusUnauthorized)
			return false
		}
		jtis[c["jti"]] = true
		return true
	}
	st := storage.NewMemory()
	o := &client.OAuthOptions{ClientCredentials: true, ClientID: "cid", ClientSecret: "s3cret", DPoP: true}
	first := callWith(t, g.options(st, o))
	if !strings.HasPrefix(first.AccessToken, "D-") {
		t.Fatalf("stored grant %+v", first)
	}
	raw, _ := st.Get(client.KeyOAuth)
	var stored struct {
		TokenType string `json:"token_type"`
		DPoPKey   string `json:"dpop_key"`
	}
	json.Unmarshal([]byte(raw), &stored)
	if stored.TokenType != "DPoP" || stored.DPoPKey == "" {
		t.Fatalf("stored grant %s: want token_type DPoP and the key", raw)
	}

	opts := g.options(st, nil)
	opts.Reconnect = client.Reuse // the stored session, as a restarted process rejoins it
	later := callWith(t, opts)
	if later.AccessToken != first.AccessToken {
		t.Fatalf("the later client has token %q, want the stored %q", later.AccessToken, first.AccessToken)
	}
	mu.Lock()
	defer mu.Unlock()
	if n, _ := g.requests(); n != 2 || asChallenges != 1 || rsChallenges != 2 {
		t.Fatalf("%d token requests, %d nonce challenges from the authorization server, %d from the MCP server: want 2, 1, 2 (one per client)", n, asChallenges, rsChallenges)
	}
}
