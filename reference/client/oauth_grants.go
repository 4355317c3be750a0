package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The grant types and token types of the grants without a user.
const (
	grantJWTBearer   = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	assertionJWT     = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
)

// EnterpriseOptions configure enterprise-managed authorization (SEP-990):
// the user's ID token from the enterprise identity provider is exchanged
// there (RFC 8693) for an identity assertion authorization grant (ID-JAG)
// for the MCP server's authorization server, which the client then
// presents there in the JWT-bearer grant (RFC 7523), authenticated as its
// own client (OAuthOptions.ClientID and ClientSecret or PrivateKey).
type EnterpriseOptions struct {
	// IdPIssuer is the identity provider's issuer URL; its token endpoint
	// is found from its metadata. Required.
	IdPIssuer string
	// IdPClientID and IdPClientSecret are the client at the identity
	// provider (secret optional). The id is required.
	IdPClientID, IdPClientSecret string
	// IDToken returns the user's ID token (from the provider's sign-in),
	// asked again for each exchange. Required.
	IDToken func(ctx context.Context) (string, error)
}

// machineFlow obtains tokens without a user, in place of the
// authorization code flow: it finds the server's protected-resource
// metadata and its authorization server's metadata as that flow does, then
// runs the grant its options name (client credentials, JWT bearer, or
// enterprise-managed authorization) and stores the token.
type machineFlow struct {
	a    *authorizer
	opts *OAuthOptions
	key  *signingKey // private_key_jwt; nil: the secret, or no client authentication
}

// Authorize implements flow.
func (f *machineFlow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("WWW-Authenticate: %w", err)
	}
	if resp.StatusCode == http.StatusForbidden && challengeParam(cs, "error") != "insufficient_scope" {
		return nil
	}
	prm, err := f.resourceMetadata(ctx, cs, req.URL.String())
	if err != nil {
		return err
	}
	as, err := f.serverMetadata(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if as == nil { // 2025-03-26: the endpoints at their default paths
		base := strings.TrimSuffix(prm.AuthorizationServers[0], "/")
		as = &oauthex.AuthServerMeta{Issuer: base, TokenEndpoint: base + "/token"}
	}
	scopes := strings.Fields(challengeParam(cs, "scope"))
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	cfg, err := f.config(ctx, prm.Resource, as, scopes)
	if err != nil {
		return err
	}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, f.a.hc))
	if err != nil {
		return fmt.Errorf("token request to %s: %w", as.TokenEndpoint, err)
	}
	g := &oauthGrant{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.TokenURL, AuthStyle: cfg.AuthStyle, Scopes: scopes}
	g.take(tok)
	return f.a.store(g)
}

// config returns the token request of the grant: client credentials, or
// the JWT-bearer grant with the workload's assertion or the ID-JAG of an
// exchange, with the client's authentication and the resource (RFC 8707).
func (f *machineFlow) config(ctx context.Context, resource string, as *oauthex.AuthServerMeta, scopes []string) (*clientcredentials.Config, error) {
	o := f.opts
	cfg := &clientcredentials.Config{ClientID: o.ClientID, TokenURL: as.TokenEndpoint, Scopes: scopes,
		EndpointParams: url.Values{}, AuthStyle: oauth2.AuthStyleInParams}
	if resource != "" {
		cfg.EndpointParams.Set("resource", resource)
	}
	switch {
	case f.key != nil:
		a, err := f.key.clientAssertion(o.ClientID, as.Issuer, time.Now())
		if err != nil {
			return nil, fmt.Errorf("client assertion: %w", err)
		}
		cfg.EndpointParams.Set("client_assertion_type", assertionJWT)
		cfg.EndpointParams.Set("client_assertion", a)
	case o.ClientSecret != "":
		cfg.ClientSecret = o.ClientSecret
		// RFC 8414 2: client_secret_basic unless the server lists only post.
		if m := as.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
			cfg.AuthStyle = oauth2.AuthStyleInParams
		} else {
			cfg.AuthStyle = oauth2.AuthStyleInHeader
		}
	}
	// clientcredentials.Config lets grant_type be replaced: the JWT-bearer
	// grant is the same request with an assertion.
	switch {
	case o.Assertion != nil:
		a, err := o.Assertion(ctx)
		if err != nil {
			return nil, fmt.Errorf("JWT-bearer assertion: %w", err)
		}
		cfg.EndpointParams.Set("grant_type", grantJWTBearer)
		cfg.EndpointParams.Set("assertion", a)
	case o.Enterprise != nil:
		jag, err := f.exchange(ctx, resource, as.Issuer, scopes)
		if err != nil {
			return nil, err
		}
		cfg.EndpointParams.Set("grant_type", grantJWTBearer)
		cfg.EndpointParams.Set("assertion", jag)
	}
	return cfg, nil
}

// exchange trades the user's ID token at the identity provider for an
// ID-JAG for the authorization server audience and the resource (SEP-990).
func (f *machineFlow) exchange(ctx context.Context, resource, audience string, scopes []string) (string, error) {
	e := f.opts.Enterprise
	idt, err := e.IDToken(ctx)
	if err != nil {
		return "", fmt.Errorf("ID token: %w", err)
	}
	idp, err := f.serverMetadata(ctx, e.IdPIssuer)
	if err != nil {
		return "", fmt.Errorf("identity provider metadata: %w", err)
	}
	if idp == nil || idp.TokenEndpoint == "" {
		return "", fmt.Errorf("identity provider %s publishes no metadata with a token endpoint", e.IdPIssuer)
	}
	creds := &oauthex.ClientCredentials{ClientID: e.IdPClientID}
	if e.IdPClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: e.IdPClientSecret}
	}
	tok, err := oauthex.ExchangeToken(ctx, idp.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: tokenTypeIDJAG, Audience: audience, Resource: resource, Scope: scopes,
		SubjectToken: idt, SubjectTokenType: tokenTypeIDToken,
	}, creds, f.a.hc)
	if err != nil {
		return "", fmt.Errorf("token exchange at %s: %w", idp.TokenEndpoint, err)
	}
	if got, _ := tok.Extra("issued_token_type").(string); got != tokenTypeIDJAG {
		return "", fmt.Errorf("token exchange at %s issued %q, not an ID-JAG", idp.TokenEndpoint, got)
	}
	return tok.AccessToken, nil
}

// resourceMetadata finds the protected-resource metadata (RFC 9728) as the
// authorization code flow does: at the challenge's resource_metadata, else
// at the well-known path of the endpoint, else at the root; without any,
// the server's origin is its authorization server (2025-03-26).
func (f *machineFlow) resourceMetadata(ctx context.Context, cs []oauthex.Challenge, endpoint string) (*oauthex.ProtectedResourceMetadata, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	type try struct{ meta, resource string }
	var tries []try
	if m := challengeParam(cs, "resource_metadata"); m != "" {
		tries = append(tries, try{m, endpoint})
	}
	at := *u
	at.RawQuery = ""
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	tries = append(tries, try{at.String(), endpoint})
	at.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, try{at.String(), u.Scheme + "://" + u.Host})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.meta, t.resource, f.a.hc)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected resource metadata at %s names no authorization server", t.meta)
		}
		return prm, nil
	}
	return &oauthex.ProtectedResourceMetadata{Resource: endpoint, AuthorizationServers: []string{u.Scheme + "://" + u.Host}}, nil
}

// serverMetadata returns the metadata of the authorization server (or
// identity provider) issuer, from the first well-known URL (RFC 8414 3.1,
// OpenID Connect Discovery) that has it; nil if none does. Unlike
// auth.GetAuthServerMetadata it does not require PKCE, which only the
// authorization code flow uses.
func (f *machineFlow) serverMetadata(ctx context.Context, issuer string) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, fmt.Errorf("issuer %q: %w", issuer, err)
	}
	path := strings.Trim(u.Path, "/")
	var at []string
	for _, wk := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		m := *u
		m.Path = wk
		if path != "" {
			m.Path += "/" + path
		}
		at = append(at, m.String())
	}
	if path != "" { // OpenID Connect Discovery appends instead
		m := *u
		m.Path = "/" + path + "/.well-known/openid-configuration"
		at = append(at, m.String())
	}
	for _, mu := range at {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, mu, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := f.a.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("metadata of %s: %w", issuer, err)
		}
		var meta oauthex.AuthServerMeta
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta)
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			continue
		case resp.StatusCode != http.StatusOK:
			return nil, fmt.Errorf("metadata of %s at %s: HTTP %d", issuer, mu, resp.StatusCode)
		case err != nil:
			return nil, fmt.Errorf("metadata of %s at %s: %w", issuer, mu, err)
		case strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
			return nil, fmt.Errorf("metadata at %s names issuer %q, not %q (RFC 8414 3.3)", mu, meta.Issuer, issuer)
		}
		if t, err := url.Parse(meta.TokenEndpoint); err != nil || (t.Scheme != "https" && t.Scheme != "http") {
			return nil, fmt.Errorf("metadata of %s: token endpoint %q is not an http(s) URL", issuer, meta.TokenEndpoint)
		}
		return &meta, nil
	}
	return nil, nil
}

// challengeParam returns a parameter of the first challenge that has it.
func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if v := c.Params[name]; v != "" {
			return v
		}
	}
	return ""
}

// checkGrant validates the options of the grants without a user.
func (o *OAuthOptions) checkGrant() error {
	n := 0
	for _, on := range []bool{o.ClientCredentials, o.Assertion != nil, o.Enterprise != nil} {
		if on {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("ClientCredentials, Assertion and Enterprise are different grants: choose one")
	case o.ClientCredentials && (o.ClientID == "" || (o.ClientSecret == "") == (o.PrivateKey == nil)):
		return errors.New("the client credentials grant needs ClientID and either ClientSecret or PrivateKey")
	case o.ClientSecret != "" && o.PrivateKey != nil:
		return errors.New("ClientSecret and PrivateKey are different client authentications: choose one")
	case o.PrivateKey != nil && (n == 0 || o.ClientID == ""):
		return errors.New("PrivateKey authenticates ClientID in the grants without a user (ClientCredentials, Assertion, Enterprise)")
	case o.Enterprise != nil && (o.Enterprise.IdPIssuer == "" || o.Enterprise.IdPClientID == "" || o.Enterprise.IDToken == nil || o.ClientID == ""):
		return errors.New("enterprise-managed authorization needs IdPIssuer, IdPClientID, IDToken and the client's ClientID")
	}
	return nil
}

// machine reports whether the options name a grant without a user.
func (o *OAuthOptions) machine() bool {
	return o.ClientCredentials || o.Assertion != nil || o.Enterprise != nil
}
