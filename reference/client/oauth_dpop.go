package client

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// dpop proves possession of the client's key (RFC 9449): a proof JWT for
// each token request and each request that carries a DPoP-bound token. The
// key is kept with the grant (a bound token is worthless without it); the
// nonces servers hand out are remembered per origin.
type dpop struct {
	key    *signingKey
	stored string // the key, PKCS #8 in base64, as the grant keeps it

	mu     sync.Mutex
	nonces map[string]string // origin -> its last DPoP-Nonce
}

// newDPoP makes a fresh P-256 key (ES256, the algorithm every server that
// takes DPoP must accept).
func newDPoP() (*dpop, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return loadDPoP(base64.StdEncoding.EncodeToString(der))
}

// loadDPoP reads a key newDPoP made.
func loadDPoP(stored string) (*dpop, error) {
	der, err := base64.StdEncoding.DecodeString(stored)
	if err != nil {
		return nil, fmt.Errorf("stored DPoP key: %w", err)
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("stored DPoP key: %w", err)
	}
	priv, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("stored DPoP key: %T, not ECDSA", key)
	}
	sk, err := newSigningKey(priv)
	if err != nil {
		return nil, err
	}
	return &dpop{key: sk, stored: stored, nonces: map[string]string{}}, nil
}

// proof returns the proof for a request of method to u; token, if not
// empty, is the access token it carries (ath).
func (d *dpop) proof(method string, u *url.URL, token string) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", "" // RFC 9449 4.2: without query and fragment
	claims := map[string]any{"jti": randomID(), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		claims["ath"] = b64.EncodeToString(sum[:])
	}
	d.mu.Lock()
	if n := d.nonces[origin(u.String())]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	return d.key.sign(map[string]any{"typ": "dpop+jwt", "jwk": d.key.jwk()}, claims)
}

// note keeps the nonce a server sent, with any response (RFC 9449 8, 9).
func (d *dpop) note(u *url.URL, h http.Header) {
	if n := h.Get("DPoP-Nonce"); n != "" {
		d.mu.Lock()
		d.nonces[origin(u.String())] = n
		d.mu.Unlock()
	}
}

// resourceNonce reports whether resp, from a resource server, asks for the
// request again with the nonce it sent: a 401 whose DPoP challenge has
// error use_dpop_nonce (RFC 9449 9).
func resourceNonce(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("DPoP-Nonce") == "" {
		return false
	}
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if c.Scheme == "dpop" && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

// dpopTransport puts a proof on every token request (a form POST) the
// authorization flows make, and sends one again, once, with the nonce an
// authorization server asks for (RFC 9449 8: a 400 use_dpop_nonce).
type dpopTransport struct {
	d    *dpop
	base http.RoundTripper
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); req.Method != http.MethodPost || mt != "application/x-www-form-urlencoded" {
		return t.base.RoundTrip(req)
	}
	for again := false; ; again = true {
		r := req.Clone(req.Context())
		if again {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		p, err := t.d.proof(req.Method, req.URL, "")
		if err != nil {
			return nil, fmt.Errorf("DPoP proof: %w", err)
		}
		r.Header.Set("DPoP", p)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		t.d.note(req.URL, resp.Header)
		if again || req.GetBody == nil || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			return resp, nil
		}
	}
}

// withDPoP returns hc with proofs on its token requests.
func withDPoP(hc *http.Client, d *dpop) *http.Client {
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &dpopTransport{d: d, base: base}
	return &c
}

// setAuthorization puts tok (if any) on req: with the DPoP scheme and a
// proof when it is the grant's DPoP-bound token (RFC 9449 7.1), else as a
// bearer token.
func (c *Client) setAuthorization(req *http.Request, tok string) error {
	if tok == "" {
		return nil
	}
	if d := c.auth.bound(); d != nil {
		p, err := d.proof(req.Method, req.URL, tok)
		if err != nil {
			return fmt.Errorf("DPoP proof: %w", err)
		}
		req.Header.Set("Authorization", "DPoP "+tok)
		req.Header.Set("DPoP", p)
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// bound returns the key of the grant's tokens if they are DPoP-bound (the
// authorization server said token_type DPoP), else nil.
func (a *authorizer) bound() *dpop {
	if a == nil || a.dpop == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.grant == nil || !strings.EqualFold(a.grant.TokenType, "DPoP") {
		return nil
	}
	return a.dpop
}

// nonceRetry keeps the DPoP nonce resp carries and reports whether it asks
// for the request again with it.
func (a *authorizer) nonceRetry(req *http.Request, resp *http.Response) bool {
	if a == nil || a.dpop == nil {
		return false
	}
	a.dpop.note(req.URL, resp.Header)
	return resourceNonce(resp)
}
