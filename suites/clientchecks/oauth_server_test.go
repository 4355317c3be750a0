package clientchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestOAuthAS: the checks' authorization server registers a public client,
// approves at once, exchanges the code only with its PKCE verifier, rotates
// the refresh token on a refresh, and its gate answers an expired or
// replaced access token with 401 naming the resource metadata.
func TestOAuthAS(t *testing.T) {
	rec := &clientRecorder{log: kit.NewLog(), run: func() int { return 1 }}
	as, err := startOAuthAS(rec, "http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer as.close()
	ctx := context.Background()
	const redirect = "http://127.0.0.1:2/callback"
	resp, err := http.Post(as.url+"/register", "application/json", strings.NewReader(`{"redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("registration: HTTP %d, client %q", resp.StatusCode, reg.ClientID)
	}
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: as.url + "/authorize", TokenURL: as.url + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil || loc.Query().Get("code") == "" || loc.Query().Get("state") != "st" {
		t.Fatalf("authorization: HTTP %d, redirect %v (%v)", resp.StatusCode, loc, err)
	}
	code := loc.Query().Get("code")
	if _, err := cfg.Exchange(ctx, code, oauth2.VerifierOption("not-the-verifier-but-long-enough-for-pkce-0123456789")); err == nil {
		t.Fatal("the code was exchanged with a wrong PKCE verifier")
	}
	resp, err = noFollow.Get(cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ = resp.Location()
	first, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil || first.RefreshToken == "" {
		t.Fatalf("exchange: %v (refresh token %q)", err, first.RefreshToken)
	}
	admitted := func(token string) (bool, *httptest.ResponseRecorder) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(nil))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		return as.admit(&exchange{}, w, r), w
	}
	if ok, w := admitted(first.AccessToken); !ok {
		t.Fatalf("the issued access token was refused: %d %s", w.Code, w.Body)
	}
	as.expire(first.AccessToken)
	ok, w := admitted(first.AccessToken)
	if ch := w.Header().Get("WWW-Authenticate"); ok || w.Code != http.StatusUnauthorized || !strings.HasPrefix(ch, `Bearer error="invalid_token", `) ||
		!strings.Contains(ch, `resource_metadata="`+as.url+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("expired token: admitted %v, HTTP %d, WWW-Authenticate %q", ok, w.Code, w.Header().Get("WWW-Authenticate"))
	}
	second, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token()
	if err != nil || second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
		t.Fatalf("refresh: %v; access %q after %q, refresh %q after %q", err, second.AccessToken, first.AccessToken, second.RefreshToken, first.RefreshToken)
	}
	if ok, w := admitted(second.AccessToken); !ok {
		t.Fatalf("the refreshed access token was refused: %d %s", w.Code, w.Body)
	}
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: first.RefreshToken}).Token(); err == nil {
		t.Fatal("the replaced refresh token was honoured: refresh tokens are not rotated")
	}
	grants := as.issued()
	if len(grants) != 4 || grants[1].Type != "authorization_code" || grants[2].Type != "refresh_token" || grants[2].Status != http.StatusOK || grants[3].Status == http.StatusOK {
		t.Errorf("grants recorded: %+v", grants)
	}
}
