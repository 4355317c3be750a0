package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// preflightTimeout bounds the first contact with the target, and
// goodbyeTimeout the notifications/initialized and DELETE that end it.
const (
	preflightTimeout = 15 * time.Second
	goodbyeTimeout   = 2 * time.Second
)

// probe is what the first initialize revealed about the target.
type probe struct {
	// version is the protocol version the target negotiated.
	version string
	// sessionless is why session checks do not apply, or "".
	sessionless string
	// rtt is how long the initialize round trip took.
	rtt time.Duration
	// url is the endpoint that answered: the target's URL, or where a
	// redirect within its origin led (follow).
	url string
}

// preflight initializes once, so that an unreachable URL or something
// that is not an MCP endpoint is one clear setup error instead of a page
// of failed checks. It learns the negotiated version and whether the
// target keeps sessions, and deletes the session it made. A redirect is
// a setup error unless follow allows it (within the target's origin only).
func preflight(ctx context.Context, url, version string, cfg *target.Profile, follow bool) (*probe, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	c := wire.New(url)
	c.ProtocolVersion = version
	c.Header = cfg.RequestHeader()
	c.FollowRedirects = follow
	if wire.Revision(version).Sessionless() {
		if p := discover(ctx, c); p != nil {
			return p, nil
		}
	}
	began := time.Now()
	resp, err := c.Initialize(ctx, "")
	rtt := time.Since(began)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) || strings.Contains(err.Error(), "connection refused") {
			return nil, &unreachableError{fmt.Errorf("cannot reach %s: %v", url, err)}
		}
		return nil, fmt.Errorf("initialize at %s: %v", url, err)
	}
	notMCP := func(why string) error {
		ct := resp.Header.Get("Content-Type")
		return fmt.Errorf("%s does not answer like an MCP Streamable HTTP endpoint: initialize got HTTP %d (%s): %s\n%s",
			url, resp.Status, ct, excerpt(resp.Body), why)
	}
	switch resp.Status {
	case http.StatusOK:
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return nil, redirected(url, resp, follow)
	case http.StatusUnauthorized, http.StatusForbidden:
		return nil, notMCP("the target refused the harness; declare its bearer tokens (principals) or headers in --target-profile")
	case http.StatusBadRequest:
		if uv := refusedVersion(resp, version); uv != nil {
			return nil, uv
		}
		return nil, notMCP("check the URL and path")
	default:
		return nil, notMCP("check the URL and path")
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != wire.MediaTypeJSON && mt != wire.MediaTypeSSE {
		return nil, notMCP("want application/json or text/event-stream")
	}
	m, err := resp.Result()
	if err != nil {
		return nil, notMCP(err.Error())
	}
	if uv := refusedVersion(resp, version); uv != nil {
		return nil, uv
	}
	if m.Error != nil {
		return nil, fmt.Errorf("initialize at %s failed: %v", url, m.Error)
	}
	negotiated, err := negotiatedVersion(m.Result)
	if err != nil {
		return nil, notMCP(err.Error())
	}
	p := &probe{version: negotiated, rtt: rtt, url: resp.URL}
	c.URL = resp.URL
	sid := resp.SessionID()
	switch {
	case wire.Revision(negotiated).Sessionless():
		p.sessionless = fmt.Sprintf("the target negotiated protocol %s, which has no sessions, GET streams or resumption", negotiated)
	case sid == "":
		p.sessionless = "the target assigned no Mcp-Session-Id (a stateless server)"
	default:
		// Courtesy, bounded: a target that answers initialize and then
		// nothing is for the run to find (liveness), not to stall here.
		bye, cancel := context.WithTimeout(ctx, goodbyeTimeout)
		defer cancel()
		c.ProtocolVersion = negotiated
		_, _ = c.Post(bye, sid, wire.Notification("notifications/initialized"))
		_, _ = c.Delete(bye, sid)
	}
	return p, nil
}

// discover asks a target for the sessionless revision c speaks with
// server/discover; it returns nil unless the target supports it, and the
// initialize handshake decides then.
func discover(ctx context.Context, c *wire.Client) *probe {
	began := time.Now()
	resp, err := c.CallModern(ctx, "server/discover", nil, nil)
	rtt := time.Since(began)
	if err != nil || resp.Status != http.StatusOK {
		return nil
	}
	m, err := resp.Result()
	if err != nil || m.Error != nil {
		return nil
	}
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(m.Result, &res) != nil || !slices.Contains(res.SupportedVersions, c.ProtocolVersion) {
		return nil
	}
	return &probe{version: c.ProtocolVersion, rtt: rtt, url: resp.URL,
		sessionless: fmt.Sprintf("the target speaks protocol %s (server/discover), which has no sessions, GET streams or resumption", c.ProtocolVersion)}
}

// unreachableError is preflight's error for a target that did not answer
// at all.
type unreachableError struct{ error }

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// unsupportedVersion is a target's refusal of the revision offered, with
// the revisions it says it supports (data.supported: -32022 of 2026-07-28,
// and the same shape that SDKs of the sessions' era answer with).
type unsupportedVersion struct {
	offered   string
	supported []string
	status    int
	code      int
}

func (e *unsupportedVersion) Error() string {
	return fmt.Sprintf("the target does not support protocol %s: HTTP %d, JSON-RPC error %d, supported %s", e.offered, e.status, e.code, quoteList(e.supported))
}

// refusedVersion reads an answer to initialize or server/discover that
// refuses the offered revision and lists those the target supports; nil
// when resp is not that.
func refusedVersion(resp *wire.Response, offered string) *unsupportedVersion {
	if resp.Status != http.StatusBadRequest && resp.Status != http.StatusOK {
		return nil
	}
	m, err := resp.Result()
	if err != nil || m.Error == nil {
		return nil
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(m.Error.Data, &data) != nil || len(data.Supported) == 0 {
		return nil
	}
	return &unsupportedVersion{offered: offered, supported: data.Supported, status: resp.Status, code: m.Error.Code}
}

// quoteList quotes target-chosen strings for a message: at most 8, each
// escaped and cut.
func quoteList(ss []string) string {
	var q []string
	for i, s := range ss {
		if i == 8 {
			q = append(q, fmt.Sprintf("and %d more", len(ss)-i))
			break
		}
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		q = append(q, fmt.Sprintf("%q", s))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

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
