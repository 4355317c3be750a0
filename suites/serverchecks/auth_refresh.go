package serverchecks

import (
	"context"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// authRefreshChecks are the checks of a token refresh across a session.
func authRefreshChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "AUTH-REFRESH-REJOIN", Level: catalogue.Res, Section: "recreate", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "token-refresh", Needs: []catalogue.Key{catalogue.KeyPrincipals, catalogue.KeyRefreshedToken}, DependsOn: []string{"RECREATE-OWNER-ONLY"},
			Summary: "The session's principal presenting another token of its own (principals[0].refreshed_token, as a refresh gives it) rejoins its session, state kept; the other principal is still refused (403/404)."},
			body: func(ctx context.Context, e *env) {
				owner, refreshed := e.as(0), e.asToken(e.Config.Principals[0].RefreshedToken)
				sid := e.connect(ctx, owner)
				var before string
				if e.Config.Tools.Stateful != nil {
					before = e.stateful(ctx, owner, sid)
				}
				// The refreshed token, on requests of the running session: a
				// server that bound the session to the literal token refuses them.
				resp, err := refreshed.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list on the session with another token of its own principal (principals[0].refreshed_token), as after a token refresh: the session must be bound to the principal, not to the token it was created with: %s", resp.Body)
				if e.Config.Tools.Stateful != nil {
					after := e.stateful(ctx, refreshed, sid)
					e.Expect(after).NotTo(Equal(before), "with the refreshed token %s did not advance: the session's state was not there", e.Config.Tools.Stateful.Name)
				} else {
					e.expectCall(ctx, refreshed, sid)
				}
				// Accepting the new token must not have opened the session to
				// whoever comes next.
				intruder := e.as(1)
				resp, err = intruder.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(BeElementOf(http.StatusForbidden, http.StatusNotFound), "tools/list by the other principal after the refreshed token was accepted")
				e.expectWorks(ctx, refreshed, sid)
			}},
	}
}

// asToken returns a client that sends token as its bearer token.
func (e *env) asToken(token string) *wire.Client {
	h := e.Config.RequestHeader()
	h.Set("Authorization", "Bearer "+token)
	return e.client(e.C.URL, h)
}
