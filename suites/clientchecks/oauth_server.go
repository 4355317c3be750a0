package clientchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-oauth2/oauth2/v4"
	oautherrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	oauthserver "github.com/go-oauth2/oauth2/v4/server"
	"github.com/go-oauth2/oauth2/v4/store"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// oauthUser is the one user the authorization server knows; it approves
// every authorization request for it at once, without a login page.
const oauthUser = "conform-user"

// oauthAS is the authorization server of the OAuth client checks, with
// the protected-resource metadata of the scripted MCP server: go-oauth2's
// server (authorization code with PKCE, refresh tokens rotated on every
// refresh, as the MCP authorization spec asks for public clients), the Go
// SDK's metadata types and its bearer-token middleware in front of the
// MCP endpoint. It runs on a port of its own, so its requests do not count
// as the client's requests to the MCP server.
type oauthAS struct {
	rec      *clientRecorder
	resource string // the MCP endpoint the tokens are for
	url      string // this server's base URL (the issuer)
	hs       *httptest.Server
	manager  *manage.Manager
	srv      *oauthserver.Server
	clients  *store.ClientStore
	gate     func(http.Handler) http.Handler

	mu      sync.Mutex
	seen    int             // requests to this server
	grants  []oauthGrant    // every token response, in order
	expired map[string]bool // access tokens the script expired
}

// oauthGrant is one token the authorization server issued.
type oauthGrant struct {
	Run         int // the client run in progress
	At          time.Time
	Type        string // authorization_code or refresh_token
	Access      string
	Refresh     string
	UsedRefresh string // for a refresh: the refresh token presented
	Status      int
}

// startOAuthAS starts the authorization server for the MCP endpoint resource.
func startOAuthAS(rec *clientRecorder, resource string) (*oauthAS, error) {
	a := &oauthAS{rec: rec, resource: resource, expired: map[string]bool{}}
	a.manager = manage.NewDefaultManager()
	a.manager.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: time.Hour, RefreshTokenExp: 24 * time.Hour, IsGenerateRefresh: true})
	a.manager.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: time.Hour, RefreshTokenExp: 24 * time.Hour,
		IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	ts, err := store.NewMemoryTokenStore()
	if err != nil {
		return nil, err
	}
	a.manager.MapTokenStorage(ts)
	a.clients = store.NewClientStore()
	a.manager.MapClientStorage(a.clients)
	a.manager.SetValidateURIHandler(loopbackRedirect)
	cfg := oauthserver.NewConfig()
	cfg.AllowedResponseTypes = []oauth2.ResponseType{oauth2.Code}
	cfg.AllowedGrantTypes = []oauth2.GrantType{oauth2.AuthorizationCode, oauth2.Refreshing}
	cfg.AllowedCodeChallengeMethods = []oauth2.CodeChallengeMethod{oauth2.CodeChallengeS256}
	cfg.ForcePKCE = true
	a.srv = oauthserver.NewServer(cfg, a.manager)
	a.srv.SetClientInfoHandler(clientInfo)
	a.srv.SetUserAuthorizationHandler(func(http.ResponseWriter, *http.Request) (string, error) { return oauthUser, nil })
	a.srv.SetInternalErrorHandler(func(err error) *oautherrors.Response {
		rec.logf("!! authorization server: %v", err)
		return nil
	})

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.serveMetadata)
	mux.HandleFunc("POST /register", a.serveRegister)
	mux.HandleFunc("GET /authorize", a.serveAuthorize)
	mux.HandleFunc("POST /token", a.serveToken)
	a.hs = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.seen++
		a.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a.hs.Listener = ln
	a.hs.Start()
	a.url = a.hs.URL
	u, err := url.Parse(resource)
	if err != nil {
		a.hs.Close()
		return nil, err
	}
	prmPath := "/.well-known/oauth-protected-resource" + u.Path
	mux.Handle("GET "+prmPath, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: resource, AuthorizationServers: []string{a.url}, BearerMethodsSupported: []string{"header"}}))
	a.gate = auth.RequireBearerToken(a.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: a.url + prmPath})
	return a, nil
}

func (a *oauthAS) close() {
	a.hs.CloseClientConnections()
	a.hs.Close()
}

// clientInfo reads the client id (and secret) from HTTP basic auth or,
// failing that, the form: golang.org/x/oauth2 tries both.
func clientInfo(r *http.Request) (string, string, error) {
	if id, secret, ok := r.BasicAuth(); ok && id != "" {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		return id, secret, nil
	}
	return oauthserver.ClientFormHandler(r)
}

// loopbackRedirect allows redirect URIs on this machine only: the checks'
// clients take the code from the redirect without a browser.
func loopbackRedirect(_, redirect string) error {
	u, err := url.Parse(redirect)
	if err != nil {
		return oautherrors.ErrInvalidRedirectURI
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	return oautherrors.ErrInvalidRedirectURI
}

func (a *oauthAS) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(&oauthex.AuthServerMeta{
		Issuer: a.url, AuthorizationEndpoint: a.url + "/authorize", TokenEndpoint: a.url + "/token", RegistrationEndpoint: a.url + "/register",
		ResponseTypesSupported: []string{"code"}, GrantTypesSupported: []string{"authorization_code", "refresh_token"},
		CodeChallengeMethodsSupported: []string{"S256"}, TokenEndpointAuthMethodsSupported: []string{"none"},
	})
}

// serveRegister is dynamic client registration (RFC 7591) of a public client.
func (a *oauthAS) serveRegister(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"invalid_client_metadata","error_description":"a JSON body with redirect_uris"}`)
		return
	}
	for _, u := range meta.RedirectURIs {
		if loopbackRedirect("", u) != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_redirect_uri","error_description":"only loopback redirect URIs: %q"}`, u)
			return
		}
	}
	id := "client-" + rand.Text()
	a.clients.Set(id, &models.Client{ID: id, Domain: meta.RedirectURIs[0], Public: true})
	a.rec.logf("   authorization server: registered client %s (redirect %s)", id, meta.RedirectURIs[0])
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
}

func (a *oauthAS) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	a.rec.logf("   authorization server: run %d authorizes client %s (approved at once)", a.rec.run(), r.FormValue("client_id"))
	if err := a.srv.HandleAuthorizeRequest(w, r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}
}

// serveToken issues tokens and remembers what it issued, for the checks.
func (a *oauthAS) serveToken(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	g := oauthGrant{Run: a.rec.run(), At: time.Now(), Type: r.PostForm.Get("grant_type"), UsedRefresh: r.PostForm.Get("refresh_token")}
	cw := &tokenCapture{ResponseWriter: w}
	a.srv.HandleTokenRequest(cw, r)
	g.Status = cw.code
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	json.Unmarshal(cw.body, &tok)
	g.Access, g.Refresh = tok.Access, tok.Refresh
	a.mu.Lock()
	a.grants = append(a.grants, g)
	a.mu.Unlock()
	a.rec.logf("   authorization server: run %d, grant %s -> %d, access token %s", g.Run, g.Type, g.Status, short(g.Access))
}

// tokenCapture keeps the token response for serveToken.
type tokenCapture struct {
	http.ResponseWriter
	code int
	body []byte
}

func (c *tokenCapture) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *tokenCapture) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	c.body = append(c.body, p...)
	return c.ResponseWriter.Write(p)
}

// verify is the MCP server's token check: issued here, for this
// resource's user, and not expired by the script.
func (a *oauthAS) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	ti, err := a.manager.LoadAccessToken(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	exp := ti.GetAccessCreateAt().Add(ti.GetAccessExpiresIn())
	a.mu.Lock()
	if a.expired[token] {
		exp = time.Now().Add(-time.Second) // the middleware answers "token expired"
	}
	a.mu.Unlock()
	return &auth.TokenInfo{UserID: ti.GetUserID(), Expiration: exp}, nil
}

// expire makes an access token expired from now on.
func (a *oauthAS) expire(token string) {
	a.mu.Lock()
	a.expired[token] = true
	a.mu.Unlock()
}

// admit answers a request to the MCP endpoint that carries no valid
// access token with 401 (and WWW-Authenticate naming the metadata), and
// reports whether it let the request through.
func (a *oauthAS) admit(x *exchange, w http.ResponseWriter, r *http.Request) bool {
	passed := false
	cw := &challengeWriter{ResponseWriter: w, presented: strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")}
	a.gate(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true })).ServeHTTP(cw, r)
	if !passed {
		a.rec.note(x, "401: %s (WWW-Authenticate: %s)", bearerProblem(r.Header.Get("Authorization"), a), w.Header().Get("WWW-Authenticate"))
	}
	return passed
}

// challengeWriter adds error="invalid_token" to the 401 challenge for a
// token that was presented (RFC 6750 section 3.1), which the SDK's
// middleware leaves out.
type challengeWriter struct {
	http.ResponseWriter
	presented bool
}

func (c *challengeWriter) WriteHeader(code int) {
	if h := c.Header(); code == http.StatusUnauthorized && c.presented {
		if v, ok := strings.CutPrefix(h.Get("WWW-Authenticate"), "Bearer "); ok {
			h.Set("WWW-Authenticate", `Bearer error="invalid_token", `+v)
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

// bearerProblem says why a's gate refused the Authorization header.
func bearerProblem(h string, a *oauthAS) string {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return "no bearer token"
	}
	a.mu.Lock()
	expired := a.expired[tok]
	a.mu.Unlock()
	if expired {
		return "the access token " + short(tok) + " expired"
	}
	return "access token " + short(tok) + " is not valid (never issued, or replaced by a refresh)"
}

// requests is how many requests the server has had.
func (a *oauthAS) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen
}

// issued returns every token response so far.
func (a *oauthAS) issued() []oauthGrant {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]oauthGrant(nil), a.grants...)
}

// short stands for a token in the log, showing none of it.
func short(tok string) string { return "token " + kit.Fingerprint(tok) }
