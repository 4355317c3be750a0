package client

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// KeyOAuth is the OAuth grant (JSON oauthGrant): the client registration
// and the tokens, so that a restarted client carries on with them. It is
// bound to the server URL and dropped when the URL changes.
const KeyOAuth = "mcp_oauth"

// OAuthOptions configure the MCP authorization flow (OAuth 2.1 with PKCE):
// on a 401 (or a 403 insufficient_scope) the client finds the server's
// protected-resource metadata and its authorization server's metadata,
// registers (a client id metadata document where the server supports one,
// else the pre-registered client, else dynamic registration), has the user
// authorize, and exchanges the code for tokens, with the scopes the server
// asks for. The flow is the Go SDK's auth.AuthorizationCodeHandler; the
// tokens are kept in Storage and refreshed with the refresh token.
// ClientCredentials, Assertion or Enterprise replace the authorization code
// flow with a grant without a user, after the same discovery.
type OAuthOptions struct {
	// RedirectURL is where the authorization server sends the user back;
	// it is registered by dynamic registration. Required by the
	// authorization code flow.
	RedirectURL string
	// Authorize takes the user to the authorization URL and returns the
	// code, state and iss of the redirect (LoopbackAuthorize, or
	// HeadlessAuthorize for servers that need no user). Required by the
	// authorization code flow.
	Authorize auth.AuthorizationCodeFetcher
	// ClientID and ClientSecret are a pre-registered client (secret
	// optional).
	ClientID, ClientSecret string
	// PrivateKey authenticates ClientID with private_key_jwt (RFC 7523
	// 2.2) instead of a secret, in the grants without a user.
	PrivateKey crypto.Signer
	// ClientCredentials uses the client credentials grant (RFC 6749 4.4,
	// the MCP extension SEP-1046): ClientID with ClientSecret or
	// PrivateKey.
	ClientCredentials bool
	// Assertion uses the JWT-bearer grant (RFC 7523 2.1) with the JWT it
	// returns, asked again for each token request: workload identity
	// federation (SEP-1933), a token the platform issues the workload for
	// the authorization server. ClientID, if set, is sent with it.
	Assertion func(ctx context.Context) (string, error)
	// Enterprise uses enterprise-managed authorization (SEP-990).
	Enterprise *EnterpriseOptions
	// DPoP binds the tokens to a key of the client (RFC 9449): a proof
	// with each token request and each request that carries a DPoP token,
	// and the server's nonce when it asks for one. The key is made once and
	// kept with the grant.
	DPoP bool
	// ClientMetadataURL is the client's id metadata document (an https
	// URL), used as client id by servers that support them.
	ClientMetadataURL string
	// ClientName is sent in dynamic registration.
	ClientName string
}

// oauthGrant is what KeyOAuth holds.
type oauthGrant struct {
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	AuthURL      string           `json:"auth_url,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style"`
	Scopes       []string         `json:"scopes,omitempty"`
	AccessToken  string           `json:"access_token"`
	TokenType    string           `json:"token_type,omitempty"`
	RefreshToken string           `json:"refresh_token,omitempty"`
	Expiry       time.Time        `json:"expiry,omitzero"`
	DPoPKey      string           `json:"dpop_key,omitempty"` // the key the tokens are bound to
}

func (g *oauthGrant) config() *oauth2.Config {
	return &oauth2.Config{ClientID: g.ClientID, ClientSecret: g.ClientSecret, Scopes: g.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: g.AuthURL, TokenURL: g.TokenURL, AuthStyle: g.AuthStyle}}
}

func (g *oauthGrant) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: g.AccessToken, TokenType: g.TokenType, RefreshToken: g.RefreshToken, Expiry: g.Expiry}
}

// flow obtains tokens on a 401 or 403: auth.AuthorizationCodeHandler, or
// machineFlow.
type flow interface {
	Authorize(ctx context.Context, req *http.Request, resp *http.Response) error
}

// authorizer keeps the client's OAuth tokens: the header of every request,
// and what to do about a 401 or 403.
type authorizer struct {
	c       *Client
	handler flow         // nil: no flow, only the stored grant
	hc      *http.Client // of the flows' requests (with DPoP proofs if on)
	dpop    *dpop        // nil: bearer tokens

	mu    sync.Mutex
	grant *oauthGrant        // nil: no token yet
	src   oauth2.TokenSource // of grant; refreshes it when it expires
}

// newAuthorizer returns the client's authorizer: with a flow if opts is
// set, with the stored grant if there is one; nil if neither.
func newAuthorizer(c *Client, opts *OAuthOptions) (*authorizer, error) {
	a := &authorizer{c: c, hc: c.opts.HTTPClient}
	var g oauthGrant
	c.st.getJSON(KeyOAuth, &g)
	var err error
	switch {
	case g.AccessToken != "" && g.DPoPKey != "":
		a.dpop, err = loadDPoP(g.DPoPKey)
	case opts != nil && opts.DPoP:
		a.dpop, err = newDPoP()
	}
	if err != nil {
		return nil, fmt.Errorf("OAuth: %w", err)
	}
	if a.dpop != nil {
		a.hc = withDPoP(a.hc, a.dpop)
	}
	if g.AccessToken != "" {
		a.set(&g)
	}
	if opts == nil {
		if a.grant == nil {
			return nil, nil
		}
		return a, nil
	}
	if err := opts.checkGrant(); err != nil {
		return nil, fmt.Errorf("OAuth: %w", err)
	}
	if opts.machine() {
		f := &machineFlow{a: a, opts: opts}
		if opts.PrivateKey != nil {
			if f.key, err = newSigningKey(opts.PrivateKey); err != nil {
				return nil, fmt.Errorf("OAuth: %w", err)
			}
		}
		a.handler = f
		return a, nil
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              opts.RedirectURL,
		AuthorizationCodeFetcher: opts.Authorize,
		RequestRefreshToken:      true, // tokens are kept in Storage, which the client owns
		Client:                   a.hc,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{opts.RedirectURL},
			GrantTypes:   []string{"authorization_code", "refresh_token"},
			ClientName:   opts.ClientName,
		}},
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			g := &oauthGrant{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthURL: cfg.Endpoint.AuthURL,
				TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes}
			g.take(tok)
			if err := a.store(g); err != nil {
				return nil, err
			}
			return a, nil
		},
	}
	if opts.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: opts.ClientMetadataURL}
	}
	if opts.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: opts.ClientID}
		if opts.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: opts.ClientSecret}
		}
	}
	if a.grant != nil {
		cfg.InitialTokenSource = a
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("OAuth: %w", err)
	}
	a.handler = h
	return a, nil
}

// take copies a token into the grant.
func (g *oauthGrant) take(tok *oauth2.Token) {
	g.AccessToken, g.TokenType, g.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.RefreshToken != "" {
		g.RefreshToken = tok.RefreshToken // a refresh may leave the old one in force
	}
}

// set makes g the grant in use, refreshing through oauth2 when it expires.
func (a *authorizer) set(g *oauthGrant) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grant = g
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, a.hc)
	a.src = g.config().TokenSource(ctx, g.token())
}

// store keeps g in Storage, then uses it: a token is never used before it
// is durable, so a killed client never loses one it spent.
func (a *authorizer) store(g *oauthGrant) error {
	if a.dpop != nil {
		g.DPoPKey = a.dpop.stored
	}
	if err := a.c.st.setJSON(KeyOAuth, g); err != nil {
		return persistErr("OAuth tokens", err)
	}
	a.set(g)
	return nil
}

// Token implements oauth2.TokenSource over the grant: the current access
// token, refreshed (and stored) once it expires.
func (a *authorizer) Token() (*oauth2.Token, error) {
	a.mu.Lock()
	src, g := a.src, a.grant
	a.mu.Unlock()
	if src == nil {
		return nil, errors.New("no OAuth token yet")
	}
	tok, err := src.Token()
	if err != nil {
		return nil, err
	}
	if tok.AccessToken != g.AccessToken {
		next := *g
		next.take(tok)
		if err := a.store(&next); err != nil {
			return nil, err
		}
	}
	return tok, nil
}

// header returns the access token to send ("" if none), refreshing it if
// it expired.
func (a *authorizer) header() (string, error) {
	a.mu.Lock()
	has := a.grant != nil
	a.mu.Unlock()
	if !has {
		return "", nil
	}
	tok, err := a.Token()
	if err != nil {
		return "", fmt.Errorf("OAuth token: %w", err)
	}
	return tok.AccessToken, nil
}

// answers reports whether resp is for the authorizer: a 401, or a 403
// insufficient_scope when there is a flow to ask for more scopes with.
func (a *authorizer) answers(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		if a.handler == nil {
			return false
		}
		cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if err != nil {
			return false
		}
		for _, c := range cs {
			if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
				return true
			}
		}
	}
	return false
}

// recover answers a 401 or 403 to a request that carried sent (the access
// token, or ""): a token another request has replaced meanwhile is simply
// used; a 401 for the current token is refreshed with the refresh token;
// failing that, or for a 403, the authorization flow runs (if the client
// has one). The caller sends the request again once, whatever this says.
func (a *authorizer) recover(ctx context.Context, req *http.Request, resp *http.Response, sent string) error {
	a.mu.Lock()
	g := a.grant
	a.mu.Unlock()
	if g != nil && g.AccessToken != sent {
		resp.Body.Close()
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && g != nil && g.RefreshToken != "" {
		err := a.refresh(ctx, g)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		a.c.log.Info("refreshing the OAuth token failed", "err", err)
	}
	if a.handler == nil {
		resp.Body.Close()
		return errors.New("the server refused the stored OAuth token, which could not be refreshed, and there is no authorization flow to run (OAuthOptions, call --oauth)")
	}
	a.c.log.Info("running the authorization flow", "status", resp.StatusCode)
	if err := a.handler.Authorize(ctx, req, resp); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	return nil
}

// refresh swaps the grant's token for a new one, whatever its expiry says
// (the server just refused it).
func (a *authorizer) refresh(ctx context.Context, g *oauthGrant) error {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, a.hc)
	tok, err := g.config().TokenSource(ctx, &oauth2.Token{RefreshToken: g.RefreshToken}).Token()
	if err != nil {
		return err
	}
	next := *g
	next.take(tok)
	a.c.log.Info("OAuth token refreshed")
	return a.store(&next)
}

// forget drops the grant.
func (a *authorizer) forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.grant, a.src = nil, nil
}
