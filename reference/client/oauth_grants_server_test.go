package client_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// grantServers are an MCP server (scripted) that wants a token, its
// authorization server and an identity provider, for the grants without a
// user. The token endpoints hand each form and header to a test's check,
// which returns the access token to issue (and its type) or an OAuth
// error. No metadata advertises PKCE: these grants do not use it.
type grantServers struct {
	t                  *testing.T
	mcp                *scripted
	url, asURL, idp    string
	authMethods        []string // the authorization server's token_endpoint_auth_methods_supported
	token, idpToken    func(w http.ResponseWriter, r *http.Request) (access, typ string, err error)
	resource           func(r *http.Request, w http.ResponseWriter) bool // nil: a bearer token issued; false: answered
	mu                 sync.Mutex
	valid              map[string]bool
	tokenReqs, idpReqs int
}

func newGrantServers(t *testing.T) *grantServers {
	g := &grantServers{t: t, mcp: newScripted(t), valid: map[string]bool{}}
	as := httptest.NewServer(http.HandlerFunc(g.serveAS))
	idp := httptest.NewServer(http.HandlerFunc(g.serveIdP))
	rs := httptest.NewServer(http.HandlerFunc(g.serveRS))
	for _, s := range []*httptest.Server{as, idp, rs} {
		t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	}
	g.asURL, g.idp, g.url = as.URL, idp.URL, rs.URL+"/mcp"
	return g
}

func (g *grantServers) serveRS(w http.ResponseWriter, r *http.Request) {
	base := strings.TrimSuffix(g.url, "/mcp")
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": g.url, "authorization_servers": []string{g.asURL}, "scopes_supported": []string{"mcp:tools"}})
		return
	}
	if g.resource != nil {
		if !g.resource(r, w) {
			return
		}
	} else {
		g.mu.Lock()
		ok := g.valid[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		g.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, base))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
	}
	g.mcp.serve(w, r)
}

func (g *grantServers) serveAS(w http.ResponseWriter, r *http.Request) {
	g.serveToken(w, r, g.asURL, map[string]any{"grant_types_supported": []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"token_endpoint_auth_methods_supported": g.authMethods}, func() (string, string, error) {
		g.mu.Lock()
		g.tokenReqs++
		g.mu.Unlock()
		return g.token(w, r)
	})
}

func (g *grantServers) serveIdP(w http.ResponseWriter, r *http.Request) {
	g.serveToken(w, r, g.idp, map[string]any{"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:token-exchange"}}, func() (string, string, error) {
		g.mu.Lock()
		g.idpReqs++
		g.mu.Unlock()
		return g.idpToken(w, r)
	})
}

// serveToken serves an authorization server's metadata (at both
// well-known paths) and its token endpoint.
func (g *grantServers) serveToken(w http.ResponseWriter, r *http.Request, issuer string, meta map[string]any, issue func() (string, string, error)) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration":
		meta["issuer"], meta["token_endpoint"] = issuer, issuer+"/token"
		json.NewEncoder(w).Encode(meta)
	case "/token":
		r.ParseForm()
		access, typ, err := issue()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		if typ == "" {
			typ = "Bearer"
		}
		g.mu.Lock()
		g.valid[access] = true
		g.mu.Unlock()
		body := map[string]any{"access_token": access, "token_type": typ, "expires_in": 3600}
		if r.Form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
			body["issued_token_type"] = "urn:ietf:params:oauth:token-type:id-jag"
		}
		json.NewEncoder(w).Encode(body)
	default:
		http.NotFound(w, r)
	}
}

// want returns an error naming the form values of r that are not as
// given.
func want(r *http.Request, values map[string]string) error {
	var bad []string
	for k, v := range values {
		if got := r.Form.Get(k); got != v {
			bad = append(bad, fmt.Sprintf("%s=%q (want %q)", k, got, v))
		}
	}
	if bad != nil {
		return errors.New("invalid_request: " + strings.Join(bad, ", "))
	}
	return nil
}

// verifyJWT checks a compact JWS's signature with pub (ECDSA or Ed25519)
// and returns its header and claims.
func verifyJWT(jws string, pub crypto.PublicKey) (header, claims map[string]any, err error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("%d parts, not 3", len(parts))
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if json.Unmarshal(h, &header) != nil || json.Unmarshal(c, &claims) != nil {
		return nil, nil, errors.New("header or claims not JSON")
	}
	input := []byte(parts[0] + "." + parts[1])
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		sum := sha256.Sum256(input)
		n := len(sig) / 2
		if header["alg"] != "ES256" || !ecdsa.Verify(p, sum[:], new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			return nil, nil, fmt.Errorf("ES256 signature does not verify (alg %v)", header["alg"])
		}
	case ed25519.PublicKey:
		if header["alg"] != "EdDSA" || !ed25519.Verify(p, input, sig) {
			return nil, nil, fmt.Errorf("EdDSA signature does not verify (alg %v)", header["alg"])
		}
	default:
		return nil, nil, fmt.Errorf("key %T", pub)
	}
	return header, claims, nil
}

// dpopKey returns the P-256 public key of a DPoP proof's jwk header and
// its RFC 7638 thumbprint.
func dpopKey(header map[string]any) (*ecdsa.PublicKey, string, error) {
	jwk, _ := header["jwk"].(map[string]any)
	if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk["d"] != nil {
		return nil, "", fmt.Errorf("jwk %v: want a public P-256 key", jwk)
	}
	x, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
	y, _ := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, "", err
	}
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])
	sum := sha256.Sum256([]byte(canon))
	return pub, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// proofClaims verifies a DPoP proof (typ, signature with its own jwk,
// htm, htu) and returns its claims and key thumbprint.
func proofClaims(proof, method, htu string) (map[string]any, string, error) {
	parts := strings.SplitN(proof, ".", 2)
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	json.Unmarshal(raw, &h)
	pub, thumb, err := dpopKey(h)
	if err != nil {
		return nil, "", err
	}
	header, claims, err := verifyJWT(proof, pub)
	if err != nil {
		return nil, "", err
	}
	if header["typ"] != "dpop+jwt" || claims["htm"] != method || claims["htu"] != htu || claims["jti"] == nil || claims["iat"] == nil {
		return nil, "", fmt.Errorf("proof header %v claims %v: want typ dpop+jwt, htm %s, htu %s, jti, iat", header, claims, method, htu)
	}
	return claims, thumb, nil
}

// ath is the access token hash of a DPoP proof.
func ath(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// options returns client options for g with the given OAuth options.
func (g *grantServers) options(st storage.Storage, o *client.OAuthOptions) client.Options {
	opts := g.mcp.options(nil)
	opts.URL, opts.Storage, opts.OAuth = g.url, st, o
	return opts
}

func (g *grantServers) requests() (tokens, idp int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tokenReqs, g.idpReqs
}
