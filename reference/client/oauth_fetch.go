package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// LoopbackAuthorize returns an OAuthOptions.Authorize that shows the user
// the authorization URL (show, for instance printing it) and waits for the
// browser to come back to redirectURL, an http URL on this machine, where it
// listens until then.
func LoopbackAuthorize(redirectURL string, show func(authURL string)) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(redirectURL)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("redirect URL %q: want http://HOST:PORT/PATH on this machine", redirectURL)
		}
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			return nil, fmt.Errorf("listening for the authorization redirect: %w", err)
		}
		got := make(chan url.Values, 1)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != u.Path {
				http.NotFound(w, r)
				return
			}
			select {
			case got <- r.URL.Query():
				fmt.Fprintln(w, "Authorization received; you may close this window.")
			default:
				http.Error(w, "authorization already received", http.StatusConflict)
			}
		})}
		go srv.Serve(ln)
		defer srv.Close()
		show(args.URL)
		select {
		case q := <-got:
			return redirectResult(q)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the authorization redirect to %s: %w", redirectURL, ctx.Err())
		}
	}
}

// HeadlessAuthorize returns an OAuthOptions.Authorize for authorization
// servers that approve without a user (test servers, pre-approved
// clients): it requests the authorization URL and takes the code from the
// redirect the server answers with, without following it.
func HeadlessAuthorize(hc *http.Client) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		c := *hc
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("authorization request: %w", err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("the authorization server answered HTTP %d, not a redirect: it wants a user (authorize in a browser instead)", resp.StatusCode)
		}
		return redirectResult(loc.Query())
	}
}

// redirectResult reads an authorization response (RFC 6749 4.1.2).
func redirectResult(q url.Values) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization refused: %s %s", e, q.Get("error_description"))
	}
	if q.Get("code") == "" {
		return nil, errors.New("the authorization redirect carries no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
