package clientchecks

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// oauthChecks are the checks of an OAuth access token that expires while
// its session lives on.
func oauthChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-OAUTH-REFRESH", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "token-refresh",
			Summary: "An access token that expires mid-session gets 401 (with WWW-Authenticate); the client refreshes it once (refresh_token grant) and retries in the same session: no initialize, no new authorization, no loop."},
			runs: 1, body: func(ctx context.Context, e *clientEnv) {
				as, expiry := e.startOAuth()
				a := e.start(oauthRun(callRun("echo", map[string]any{"text": "after the refresh"})))
				e.oauthFinish(ctx, a, as, "on the 401 for its expired access token the client must refresh it (refresh_token grant) and send the call again in the same session")
				at := expiry.wait(e)
				e.expectRefreshedInSession(a.n, as, at)
			}},

		{Entry: catalogue.Entry{ID: "CLI-OAUTH-DURABLE", Level: catalogue.Res, Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "token-refresh",
			Summary: "A refreshed token is durable: killed after the refresh, the restarted client presents the refreshed token (never the stale one) in its stored session."},
			runs: 2, waits: longStep, body: func(ctx context.Context, e *clientEnv) {
				as, expiry := e.startOAuth()
				a := e.start(oauthRun(longCall))
				e.oauthWaitDuring(ctx, a, as, "the call sent again with a new access token, and a notification on its stream", func(x exchange) bool {
					return x.Run == a.n && x.RPC.Method == "tools/call" && x.Status == http.StatusOK && len(x.Events) > 1
				})
				a.kill()
				at := expiry.wait(e)
				// How the token was renewed is CLI-OAUTH-REFRESH's to grade.
				fresh := e.renewedToken(a.n, as, at)
				b := e.start(oauthRun(actionRun(contract.ActionList)))
				e.oauthFinish(ctx, b, as, "the restarted client must list the tools with its stored, refreshed access token")
				xs := e.exchanges(b.n)
				e.Expect(xs).NotTo(BeEmpty(), "run %d sent nothing", b.n)
				for _, x := range xs {
					e.Expect(x.Authorization).NotTo(Equal("Bearer "+at.token), "#%d: the restarted client presented the stale access token %s, which the refresh replaced before the kill: the refreshed token was not kept in durable storage", x.N, short(at.token))
				}
				// Judged on the first request that presents a token: a client
				// may first ask without one (to learn the authorization
				// server from the 401), which says nothing of what it stored.
				i := slices.IndexFunc(xs, func(x exchange) bool { return x.Authorization != "" })
				e.Expect(i).NotTo(Equal(-1), "the restarted client presented no access token in %d requests: the refreshed token was not kept", len(xs))
				e.Expect(xs[i].Authorization).To(Equal("Bearer "+fresh), "#%d, the restarted client's first request with a token, must carry the refreshed access token %s that the killed run stored", xs[i].N, short(fresh))
				for _, g := range as.issued() {
					e.Expect(g.Run == b.n).To(BeFalse(), "run %d asked the authorization server for a token (%s): the stored, refreshed one was valid", b.n, g.Type)
				}
			}},
	}
}

// oauthRun is r under OAuth (contract.EnvOAuth).
func oauthRun(r contract.Run) contract.Run {
	r.OAuth = true
	return r
}

// tokenExpiry is the moment the script expired the client's access token:
// its first tools/call, of which x is the exchange.
type tokenExpiry struct {
	mu    sync.Mutex
	x     exchange
	token string
	done  bool
}

// wait returns the expiry, failing the check if it never came.
func (t *tokenExpiry) wait(e *clientEnv) *tokenExpiry {
	e.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		e.Failf("the client sent no tools/call with an access token: its token never expired")
	}
	return t
}

// startOAuth puts an authorization server in front of the scripted MCP
// server: a request without a valid access token gets 401, and the access
// token of the first tools/call expires as that call arrives.
func (e *clientEnv) startOAuth() (*oauthAS, *tokenExpiry) {
	e.Helper()
	as, err := startOAuthAS(e.rec, e.srv.url)
	if err != nil {
		e.Failf("authorization server: %v", err)
	}
	e.Cleanup(func(context.Context) { as.close() })
	e.Logf("authorization server at %s (go-oauth2: authorization code with PKCE, refresh tokens rotated; approves at once)", as.url)
	exp := &tokenExpiry{}
	e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && x.RPC.Method == "tools/call" {
			exp.mu.Lock()
			if !exp.done {
				exp.done, exp.token, exp.x = true, tok, *x
				as.expire(tok)
				e.rec.note(x, "the access token %s expires as this call arrives", short(tok))
			}
			exp.mu.Unlock()
		}
		return !as.admit(x, w, r)
	})
	return as, exp
}

// oauthFinish is finish for a run under OAuth: a client that ended without
// ever asking the authorization server for anything does not do OAuth, and
// the check is not applicable to it.
func (e *clientEnv) oauthFinish(ctx context.Context, cr *clientRun, as *oauthAS, expect string) {
	e.Helper()
	cr.wait(ctx)
	e.skipWithoutOAuth(cr, as)
	cr.finish(ctx, expect)
}

// oauthWaitDuring is waitForDuring for a run under OAuth: a client that
// ends first without OAuth makes the check not applicable.
func (e *clientEnv) oauthWaitDuring(ctx context.Context, cr *clientRun, as *oauthAS, what string, match func(exchange) bool) {
	e.Helper()
	for ctx.Err() == nil && cr.deadlineIn() > 0 {
		if slices.ContainsFunc(e.rec.all(), match) {
			return
		}
		if cr.exitedNow() {
			e.skipWithoutOAuth(cr, as)
			break
		}
	}
	e.waitForDuring(ctx, cr, what, match)
}

// skipWithoutOAuth skips the check if run cr, ended, failed without ever
// asking the authorization server for anything: the client does not do
// OAuth (or declined the run).
func (e *clientEnv) skipWithoutOAuth(cr *clientRun, as *oauthAS) {
	e.Helper()
	cr.declined()
	if cr.code != 0 && as.requests() == 0 {
		e.Skipf(report.NotOffered, "not applicable: the client does not do OAuth: run %d (%s) ended with %s after the 401 without a request to the protected resource metadata or the authorization server (a client with OAuth support runs the flow when %s is set)%s",
			cr.n, cr.action, cr.exitText(), contract.EnvOAuth, cr.clientError())
	}
}

// expectRefreshedInSession grades run n after the access token expired at
// at: one refresh_token grant, no new authorization, no initialize, every
// request in the same session, the call sent again once with the new
// token. It returns the refreshed access token.
func (e *clientEnv) expectRefreshedInSession(n int, as *oauthAS, at *tokenExpiry) string {
	e.Helper()
	sid := at.x.SessionID
	e.Expect(sid).NotTo(BeEmpty(), "#%d, the call whose token expired, carried no Mcp-Session-Id", at.x.N)
	var refreshes, authorizations []oauthGrant
	for _, g := range as.issued() {
		switch {
		case g.Run != n || !g.At.After(at.x.At):
		case g.Type == "refresh_token":
			refreshes = append(refreshes, g)
		default:
			authorizations = append(authorizations, g)
		}
	}
	e.Expect(authorizations).To(BeEmpty(), "after the 401 for its expired access token (#%d) the client ran the authorization flow again (%d %s grants) instead of refreshing with the refresh token the authorization server issued with the expired one", at.x.N, len(authorizations), grantTypes(authorizations))
	if len(refreshes) != 1 {
		e.Failf("after the 401 for its expired access token (#%d) the client asked for %d refresh_token grants, want exactly 1", at.x.N, len(refreshes))
	}
	e.Expect(refreshes[0].Status).To(Equal(http.StatusOK), "the refresh_token grant presented %s, the refresh token issued last", short(refreshes[0].UsedRefresh))
	fresh := refreshes[0].Access
	var calls []exchange
	for _, x := range e.exchanges(n) {
		if x.N <= at.x.N {
			continue
		}
		e.Expect(x.isInit()).To(BeFalse(), "#%d: initialize after the 401 for the expired token (#%d): a 401 means the access token is stale, not the session; refresh the token and stay in session %s", x.N, at.x.N, sid)
		e.Expect(x.SessionID).To(Equal(sid), "#%d: after the 401 every request goes on in session %s", x.N, sid)
		if x.RPC.Method == "tools/call" {
			calls = append(calls, x)
		}
	}
	if len(calls) != 1 {
		e.Failf("after the 401 for the expired token (#%d) the client sent tools/call %d times, want once, with the refreshed token%s", at.x.N, len(calls), listExchanges(calls))
	}
	e.Expect(calls[0].Authorization).To(Equal("Bearer "+fresh), "#%d, the call sent again, must carry the refreshed access token %s", calls[0].N, short(fresh))
	e.Expect(calls[0].Status).To(Equal(http.StatusOK), "#%d, the call sent again with the refreshed token", calls[0].N)
	return fresh
}

// renewedToken returns the access token run n got last after its token
// expired at at, failing the check if it got none.
func (e *clientEnv) renewedToken(n int, as *oauthAS, at *tokenExpiry) string {
	e.Helper()
	fresh := ""
	for _, g := range as.issued() {
		if g.Run == n && g.At.After(at.x.At) && g.Status == http.StatusOK && g.Access != "" {
			fresh = g.Access
		}
	}
	if fresh == "" {
		e.Failf("after the 401 for its expired access token (#%d) run %d got no new access token from the authorization server", at.x.N, n)
	}
	return fresh
}

// grantTypes lists the grant types of gs.
func grantTypes(gs []oauthGrant) string {
	var ts []string
	for _, g := range gs {
		ts = append(ts, g.Type)
	}
	return strings.Join(ts, ", ")
}

// listExchanges names xs for a message.
func listExchanges(xs []exchange) string {
	if len(xs) == 0 {
		return ""
	}
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprintf("#%d %s %d", x.N, short(strings.TrimPrefix(x.Authorization, "Bearer ")), x.Status))
	}
	return " (" + strings.Join(out, "; ") + ")"
}
