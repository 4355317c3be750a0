package wire

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects bounds a chain of followed redirects, as net/http does.
const maxRedirects = 10

// RedirectPolicy is the CheckRedirect of every client the harness sends
// with. By default a redirect is not followed: the 3xx comes back as the
// answer, for the caller to report. With follow, a redirect within the
// origin of the first request (scheme, host and port) is followed; one to
// another origin never is, so neither a request nor its credentials ever
// leave the target.
func RedirectPolicy(follow bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !follow || !SameOrigin(req.URL, via[0].URL) {
			return http.ErrUseLastResponse
		}
		if len(via) >= maxRedirects {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// SameOrigin reports whether a and b have the same scheme, host and port,
// a scheme's default port included.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// send sends req under the client's redirect policy, whatever
// http.Client the caller put in c.HTTP.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	hc := *c.HTTP
	hc.CheckRedirect = RedirectPolicy(c.FollowRedirects)
	return hc.Do(req)
}
