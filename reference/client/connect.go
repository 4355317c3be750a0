package client

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// errCannotRejoin: the server accepts neither a re-initialize nor plain
// reuse of the stored id; the client starts afresh instead.
var errCannotRejoin = errors.New("cannot rejoin the stored session")

// Connect joins the server: it rejoins the stored session if there is one
// (CLI-RECONNECT; stored token only, no auth flow) and otherwise, or if the
// stored session is gone or unusable, starts a new one (CLI-FALLBACK). Then
// it opens the standalone GET stream, and returns once it is open (or
// refused).
//
// A client of 2026-07-28 that also speaks the older revisions uses the
// revision it found the origin to speak (cached in Storage), probing with
// server/discover only when it knows none, and probes again when the
// server answers as one of the other revision (see era.go).
func (c *Client) Connect(ctx context.Context) error {
	err := c.connect(ctx)
	if err != nil && c.dualEra() && !c.modern() && servesModern(err) {
		c.log.Info("the server answered as a "+ModernProtocolVersion+" server; probing again", "err", err)
		if serr := c.switchEra(ctx, ModernProtocolVersion); serr != nil {
			return errors.Join(err, serr)
		}
		return nil
	}
	return err
}

func (c *Client) connect(ctx context.Context) (err error) {
	c.connectMu.Lock()
	defer c.connectMu.Unlock()
	ctx, cancel := c.bind(ctx)
	defer cancel()
	if done, err := c.connectCached(); done || err != nil {
		return err
	}
	if c.modern() {
		v, err := c.discover(ctx)
		if err != nil {
			return err
		}
		if cerr := c.cacheRevision(cmp.Or(v, ModernProtocolVersion)); cerr != nil {
			return cerr
		}
		if v == "" {
			return nil
		}
		c.proto.Store(v) // a server of an older revision: the handshake, then
	}
	defer func() {
		// Connected means listening: what the server sends on the
		// standalone stream right after (even a response) is not missed.
		if err == nil {
			c.awaitGET(ctx, c.opts.MaxReconnectDelay)
		}
	}()
	if _, err := c.current(); err == nil {
		return nil
	} else if errors.Is(err, ErrClosed) {
		return err
	}
	reason := "no stored session"
	stored := c.st.get(KeySessionID)
	if stored != "" && c.st.get(KeySessionAuth) == "bearer" && c.token() == "" {
		// The session was bound to a token that is no longer stored.
		if err := c.forgetSession(); err != nil {
			return err
		}
		stored, reason = "", "stored session needs a token and none is stored"
	}
	if stored != "" {
		old := session{id: stored, version: c.st.get(KeyProtocolVersion)}
		mode := c.rejoinMode(old)
		c.emit(StatusEvent{Status: Reconnecting, SessionID: stored, Reason: "rejoining the stored session (" + string(mode) + ")"})
		sess, first, err := c.rejoin(ctx, old, mode)
		var g *SessionGoneError
		switch {
		case err == nil:
			return c.join(sess, first, sess.id != stored, true, "rejoined the stored session")
		case errors.As(err, &g):
			c.noteHint(g.Resume)
			if g.NewSessionID != "" {
				// RESTART-HINT: the server already made a session for us.
				if err := c.forgetSession(); err != nil {
					return err
				}
				return c.join(session{id: g.NewSessionID, version: old.version}, nil, true, true, "stored session gone; adopted the server's new session")
			}
			reason = "stored session gone: " + err.Error()
		case errors.Is(err, errCannotRejoin):
			reason = err.Error()
		case c.dualEra() && servesModern(err):
			// The server restarted as one of 2026-07-28, without sessions:
			// Connect switches, with no more requests on this one.
			return err
		default:
			c.emit(StatusEvent{Status: Disconnected, SessionID: stored, Err: err, Reason: "rejoin failed"})
			return err
		}
		if err := c.forgetSession(); err != nil {
			return err
		}
	}
	c.emit(StatusEvent{Status: Connecting, Reason: reason})
	sess, err := c.initialize(ctx, session{})
	if err != nil {
		c.emit(StatusEvent{Status: Disconnected, Err: err, Reason: "initialize failed"})
		return err
	}
	return c.join(sess, nil, true, false, "new session")
}

// join installs sess, reports it and opens its GET stream (first, if
// the rejoin already opened it).
func (c *Client) join(sess session, first *answer, fresh, reconnected bool, reason string) error {
	sess, err := c.install(sess, fresh)
	if err != nil {
		first.close()
		c.emit(StatusEvent{Status: Disconnected, Err: err})
		return err
	}
	c.emit(StatusEvent{Status: Connected, SessionID: sess.id, ProtocolVersion: sess.version, Reconnected: reconnected, NewSession: fresh, Reason: reason})
	c.startStandalone(sess, first)
	return nil
}

// rejoinMode resolves Auto: no re-initialize under a call in flight.
func (c *Client) rejoinMode(old session) ReconnectMode {
	if c.opts.Reconnect != Auto {
		return c.opts.Reconnect
	}
	for _, rec := range c.st.inFlight() {
		if rec.SessionID == old.id {
			return Reuse
		}
	}
	return Reinitialize
}

// rejoin reattaches to the stored session in the configured mode, trying the
// other mode once if the server does not support the first.
func (c *Client) rejoin(ctx context.Context, old session, mode ReconnectMode) (session, *answer, error) {
	var last error
	for range 2 {
		switch mode {
		case Reuse:
			first, err := c.reuse(ctx, old)
			if !errors.Is(err, errCannotRejoin) {
				return old, first, err
			}
			c.log.Info("server wants an initialize to rejoin; trying re-initialize", "err", err)
			mode, last = Reinitialize, err
		default:
			sess, err := c.initialize(ctx, old)
			if !errors.Is(err, errCannotRejoin) {
				return sess, nil, err
			}
			c.log.Info("server does not recreate transports; trying reuse without initialize", "err", err)
			mode, last = Reuse, err
		}
	}
	return session{}, nil, last
}

// initialize runs the handshake: initialize (carrying with.id when
// re-initializing a live session), then notifications/initialized.
func (c *Client) initialize(ctx context.Context, with session) (session, error) {
	id := c.newID()
	// A capability is declared for each handler Options sets, and no other
	// (mcp.ClientCapabilities would always declare roots).
	params := map[string]any{
		"protocolVersion": c.revision(),
		"capabilities":    c.capabilities(),
		"clientInfo":      &mcp.Implementation{Name: c.opts.ClientName, Version: clientVersion},
	}
	a, err := c.send(ctx, http.MethodPost, with, request(id, "initialize", params), "")
	if err != nil {
		return session{}, err
	}
	defer a.close()
	rejoining := with.id != ""
	if g := gone(a, with); g != nil {
		return session{}, g
	}
	if err := c.refusedAsModern(a, "initialize"); err != nil {
		return session{}, err
	}
	switch {
	case rejoining && a.status == http.StatusForbidden:
		// The session belongs to another principal: not ours to rejoin.
		return session{}, &SessionGoneError{SessionID: with.id, Reason: "forbidden: " + unexpected(a).Error()}
	case rejoining && a.status != http.StatusOK && a.status != http.StatusUnauthorized:
		return session{}, fmt.Errorf("%w: re-initialize answered %v", errCannotRejoin, unexpected(a))
	case a.status != http.StatusOK:
		return session{}, fmt.Errorf("initialize: %w", unexpected(a))
	}
	var resp *message
	if a.events != nil {
		resp, err = c.follow(ctx, with, a, &pending{id: id, method: "initialize", quiet: true})
	} else {
		resp, err = readJSONResponse(a, id)
	}
	if err != nil {
		return session{}, fmt.Errorf("initialize: %w", err)
	}
	if resp.Error != nil {
		if rejoining && !(c.dualEra() && servesModern(resp.Error)) {
			return session{}, fmt.Errorf("%w: re-initialize answered %v", errCannotRejoin, resp.Error)
		}
		return session{}, fmt.Errorf("initialize: %w", resp.Error)
	}
	var res mcp.InitializeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil || res.ProtocolVersion == "" {
		return session{}, fmt.Errorf("initialize: not an InitializeResult: %.200s", resp.Result)
	}
	sess := session{id: a.header.Get(headerSessionID), version: res.ProtocolVersion}
	if rejoining && sess.id == "" {
		sess.id = with.id
	}
	n, err := c.send(ctx, http.MethodPost, sess, notification("notifications/initialized", nil), "")
	if err != nil {
		return session{}, err
	}
	n.close()
	if n.status != http.StatusAccepted && n.status != http.StatusOK {
		return session{}, fmt.Errorf("notifications/initialized: %w", unexpected(n))
	}
	return sess, nil
}

// reuse rejoins without initialize (RESUME-NO-INIT): the GET stream with the
// stored id and protocol version is the probe, and is kept if it opens.
func (c *Client) reuse(ctx context.Context, old session) (*answer, error) {
	last := c.st.get(KeyLastEventID)
	for {
		a, err := c.openGET(ctx, old, last)
		if err != nil {
			return nil, err
		}
		if a.events != nil {
			return a, nil
		}
		if g := gone(a, old); g != nil {
			return nil, g
		}
		if err := c.refusedAsModern(a, "rejoining"); err != nil {
			return nil, err
		}
		if last != "" && replayReason(a) != "" {
			// The stored position cannot be replayed: new messages only.
			if err := c.st.set(KeyLastEventID, ""); err != nil {
				return nil, persistErr("last event id", err)
			}
			last = ""
			continue
		}
		switch a.status {
		case http.StatusUnauthorized:
			return nil, fmt.Errorf("rejoining: %w", unexpected(a))
		case http.StatusForbidden:
			return nil, &SessionGoneError{SessionID: old.id, Reason: "forbidden: " + unexpected(a).Error()}
		}
		// No GET stream here (405) or a stale one in the way (409): ask with a ping.
		return nil, c.ping(ctx, old)
	}
}

// openGET opens a GET stream that outlives ctx (it is handed to the
// standalone runner), though ctx still bounds the wait for its headers.
func (c *Client) openGET(ctx context.Context, sess session, last string) (*answer, error) {
	getCtx, cancel := context.WithCancel(c.life)
	stop := context.AfterFunc(ctx, cancel)
	a, err := c.send(getCtx, http.MethodGet, sess, nil, last)
	if !stop() || err != nil || a.events == nil {
		cancel()
		if a != nil {
			a.close()
		}
		if err == nil && ctx.Err() != nil {
			err = ctxError(ctx, "GET")
		}
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	a.cancel = cancel
	return a, nil
}

// ping checks that old answers requests without an initialize.
func (c *Client) ping(ctx context.Context, old session) error {
	id := c.newID()
	a, err := c.send(ctx, http.MethodPost, old, request(id, "ping", nil), "")
	if err != nil {
		return err
	}
	defer a.close()
	if g := gone(a, old); g != nil {
		return g
	}
	if err := c.refusedAsModern(a, "ping"); err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("%w: ping answered %v", errCannotRejoin, unexpected(a))
	}
	var resp *message
	if a.events != nil {
		resp, err = c.follow(ctx, old, a, &pending{id: id, method: "ping", quiet: true})
	} else {
		resp, err = readJSONResponse(a, id)
	}
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("%w: ping answered %v", errCannotRejoin, resp.Error)
	}
	return nil
}

// install makes sess the client's session and stores it. A fresh session
// starts with no stream positions (event ids belong to one session).
func (c *Client) install(sess session, fresh bool) (session, error) {
	c.mu.Lock()
	c.gen++
	sess.gen = c.gen
	c.sess = sess
	c.connected = true
	auth := ""
	if c.tok != "" {
		auth = "bearer"
	}
	c.mu.Unlock()
	for _, kv := range [][2]string{{KeySessionID, sess.id}, {KeyProtocolVersion, sess.version}, {KeySessionAuth, auth}} {
		if err := c.st.set(kv[0], kv[1]); err != nil {
			return sess, persistErr("session", err)
		}
	}
	if fresh {
		if err := c.st.set(KeyLastEventID, ""); err != nil {
			return sess, persistErr("session", err)
		}
	}
	return sess, nil
}

// forgetSession removes the stored session; the calls it had in flight stay
// until ResumeCall reports them lost.
func (c *Client) forgetSession() error {
	keys := []string{KeySessionID, KeySessionAuth, KeyProtocolVersion, KeyLastEventID}
	if err := c.st.removeAll(keys); err != nil {
		return persistErr("session removal", err)
	}
	return nil
}
