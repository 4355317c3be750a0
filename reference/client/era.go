package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
)

// KeyRevisions is the revision each origin was found to speak: a JSON
// object, origin (scheme://host) -> protocol version. The era is a
// property of the server, so a restarted client of 2026-07-28 does not
// probe again; it probes when the cached revision fails.
const KeyRevisions = "mcp_revisions"

// modernCodes are the errors only a server of 2026-07-28 answers with:
// HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion.
var modernCodes = []int{-32020, CodeMissingCapability, CodeUnsupportedVersion}

// dualEra reports a client of 2026-07-28, which also speaks the revisions
// with the initialize handshake. A client told an older revision stays
// there: it has no way forward.
func (c *Client) dualEra() bool { return c.opts.ProtocolVersion == ModernProtocolVersion }

// origin is u's scheme and host, the scope of a cached revision.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

// cachedRevision returns the revision stored for the client's origin.
func (c *Client) cachedRevision() string {
	m := map[string]string{}
	c.st.getJSON(KeyRevisions, &m)
	return m[origin(c.url)]
}

// cacheRevision stores v as the revision the client's origin speaks.
func (c *Client) cacheRevision(v string) error {
	if !c.dualEra() {
		return nil
	}
	m := map[string]string{}
	c.st.getJSON(KeyRevisions, &m)
	if m[origin(c.url)] == v {
		return nil
	}
	m[origin(c.url)] = v
	if err := c.st.setJSON(KeyRevisions, m); err != nil {
		return persistErr("revision", err)
	}
	return nil
}

// connectCached uses the cached revision of a dual-era client: an older one
// is spoken at once (the handshake follows, done false), and 2026-07-28
// needs no request at all (done true).
func (c *Client) connectCached() (done bool, err error) {
	v := c.cachedRevision()
	if !c.dualEra() || v == "" {
		return false, nil
	}
	if _, err := c.current(); err == nil || errors.Is(err, ErrClosed) {
		return err == nil, err
	}
	c.proto.Store(v)
	if v != ModernProtocolVersion {
		c.log.Info("the server spoke "+v+" before; no probe", "origin", origin(c.url))
		return false, nil
	}
	c.mu.Lock()
	c.connected = true
	c.sess = session{version: ModernProtocolVersion}
	c.mu.Unlock()
	c.emit(StatusEvent{Status: Connected, ProtocolVersion: ModernProtocolVersion, Reason: "the server spoke " + ModernProtocolVersion + " before; no session"})
	return true, nil
}

// legacyStatus reports the statuses an older server refuses a request of
// 2026-07-28 with.
func legacyStatus(s int) bool {
	return s == http.StatusBadRequest || s == http.StatusNotFound || s == http.StatusMethodNotAllowed
}

// servesLegacy reports an answer to a request of 2026-07-28 that only a
// server of an older revision gives: a 400, 404 or 405 whose body holds no
// recognized error of 2026-07-28, or a -32022 that does not list it.
func servesLegacy(err error) bool {
	var rpc *RPCError
	var he *HTTPError
	switch {
	case errors.As(err, &rpc) && rpc.Code == CodeUnsupportedVersion:
		return !slices.Contains(unsupportedVersions(rpc), ModernProtocolVersion)
	case errors.As(err, &rpc):
		return legacyStatus(rpc.HTTPStatus) && !slices.Contains(modernCodes, rpc.Code)
	case errors.As(err, &he):
		return legacyStatus(he.Status) && (he.RPC == nil || !slices.Contains(modernCodes, he.RPC.Code))
	}
	return false
}

// servesModern reports an answer to a request of an older revision that
// only a server of 2026-07-28 gives: -32022 listing 2026-07-28, or a 400
// holding another error of 2026-07-28 ("If the body contains a recognized
// modern JSON-RPC error, the server speaks a modern version of MCP").
func servesModern(err error) bool {
	var rpc *RPCError
	var he *HTTPError
	status := 0
	switch {
	case errors.As(err, &he) && he.RPC != nil:
		rpc, status = he.RPC, he.Status
	case errors.As(err, &rpc):
		status = rpc.HTTPStatus
	default:
		return false
	}
	if rpc.Code == CodeUnsupportedVersion {
		return slices.Contains(unsupportedVersions(rpc), ModernProtocolVersion)
	}
	return status == http.StatusBadRequest && slices.Contains(modernCodes, rpc.Code)
}

// refusedAsModern returns the refusal a of a request of an older revision
// as an error when a dual-era client finds in it a server of 2026-07-28
// (servesModern), and nil otherwise. Nothing more is then sent on the
// session, which that server does not have: the caller gives up at once
// and the client switches (Connect, withEra).
func (c *Client) refusedAsModern(a *answer, what string) error {
	if !c.dualEra() || c.modern() || a.status == http.StatusOK {
		return nil
	}
	if err := unexpected(a); servesModern(err) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// withEra runs op; when it fails with an answer of the other era (the
// server restarted into another revision), a dual-era client switches to
// that revision and runs op once more. It switches at most once per op.
func (c *Client) withEra(ctx context.Context, op func() error) error {
	err := op()
	if err == nil || !c.dualEra() {
		return err
	}
	to := ""
	switch {
	case c.modern() && servesLegacy(err):
		to = cmp.Or(legacyFallback(err), DefaultProtocolVersion)
	case !c.modern() && servesModern(err):
		to = ModernProtocolVersion
	default:
		return err
	}
	c.log.Info("the server no longer speaks "+c.revision()+"; switching to "+to, "err", err)
	if serr := c.switchEra(ctx, to); serr != nil {
		return errors.Join(err, serr)
	}
	return op()
}

// switchEra drops what belonged to the revision spoken so far (the
// session, its GET stream) without a word to the server, which no longer
// speaks it, and connects in revision to: server/discover for
// 2026-07-28, a new session otherwise. The new revision is cached.
func (c *Client) switchEra(ctx context.Context, to string) error {
	c.connectMu.Lock()
	defer c.connectMu.Unlock()
	ctx, cancel := c.bind(ctx)
	defer cancel()
	c.stopStandalone()
	c.mu.Lock()
	old := c.sess.id
	c.connected, c.sess = false, session{}
	c.mu.Unlock()
	if err := c.forgetSession(); err != nil {
		return err
	}
	c.proto.Store(to)
	c.emit(StatusEvent{Status: Reconnecting, SessionID: old, Reason: "the server now speaks " + to})
	if to == ModernProtocolVersion {
		v, err := c.discover(ctx)
		if err != nil {
			return err
		}
		if v != "" {
			// The server answered both eras' requests as the other one:
			// no second switch, which could only loop.
			return fmt.Errorf("the server refused a request of %s as a %s server, then server/discover as an older one", DefaultProtocolVersion, ModernProtocolVersion)
		}
		return c.cacheRevision(to)
	}
	if err := c.cacheRevision(to); err != nil {
		return err
	}
	sess, err := c.initialize(ctx, session{})
	if err != nil {
		c.emit(StatusEvent{Status: Disconnected, Err: err, Reason: "initialize failed"})
		return err
	}
	return c.join(sess, nil, true, true, "the server speaks "+to+" now; new session")
}
