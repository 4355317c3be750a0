package harness

import (
	"fmt"
	"net/url"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// redirected is the setup error for a target that answered initialize with
// a redirect the harness did not follow: it names where the redirect led
// and why the harness did not go there.
func redirected(target string, resp *wire.Response, follow bool) error {
	from, err := url.Parse(resp.URL)
	if err != nil || resp.URL == "" {
		from, _ = url.Parse(target)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return fmt.Errorf("%s answers initialize with a redirect (HTTP %d) but no Location: it is not an MCP endpoint; check the URL", target, resp.Status)
	}
	to, err := from.Parse(loc)
	if err != nil {
		return fmt.Errorf("%s answers initialize with a redirect (HTTP %d) to %q, which is not a URL", target, resp.Status, loc)
	}
	if !wire.SameOrigin(from, to) {
		return fmt.Errorf("%s redirects initialize (HTTP %d) to %s, another origin: the harness never follows a redirect off the target's origin (scheme, host and port), so nothing, credentials included, was sent there; if that is the endpoint to check, pass it as --url",
			target, resp.Status, to)
	}
	if follow {
		return fmt.Errorf("%s redirects initialize (HTTP %d) to %s, and the redirects did not end: check the URL", target, resp.Status, to)
	}
	return fmt.Errorf("%s redirects initialize (HTTP %d) to %s: the harness does not follow redirects; pass that URL as --url, or run with --follow-redirects to follow redirects within the target's origin",
		target, resp.Status, to)
}
