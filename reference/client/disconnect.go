package client

import (
	"context"
	"fmt"
	"net/http"
)

// DisconnectOptions say how far a disconnect goes.
type DisconnectOptions struct {
	// ClearSession is the user's explicit disconnect: the session is ended
	// on the server (DELETE) and removed from storage, with the calls in
	// flight, the last result and the logs. Without it the client only lets
	// go, as a closing page does, and a later client rejoins.
	ClearSession bool
}

// Disconnect ends the client (CLI-CLEAR-ON-DISCONNECT). With ClearSession
// the stored session is removed even if the DELETE fails; the DELETE's
// error is still returned.
func (c *Client) Disconnect(ctx context.Context, opts DisconnectOptions) error {
	if !opts.ClearSession {
		return c.Close()
	}
	if c.modern() {
		return ErrSessionless
	}
	ctx, cancel := c.bind(ctx)
	defer cancel()
	sess, err := c.current()
	if err != nil {
		sess = session{id: c.st.get(KeySessionID), version: c.st.get(KeyProtocolVersion)}
	}
	c.stopStandalone()
	var delErr error
	if sess.id != "" {
		a, err := c.send(ctx, http.MethodDelete, sess, nil, "")
		switch {
		case err != nil:
			delErr = fmt.Errorf("DELETE: %w", err)
		case a.status < 300, a.status == http.StatusNotFound, a.status == http.StatusMethodNotAllowed:
			// Ended, already gone, or the server does not let clients end sessions.
		default:
			delErr = fmt.Errorf("DELETE: %w", unexpected(a))
		}
	}
	keys := append([]string{KeyLastResult, KeyLogs, KeyResumeHint}, sessionKeys...)
	if err := c.st.removeAll(keys); err != nil {
		c.shutdown("disconnected", sess.id)
		return persistErr("disconnect", err)
	}
	c.shutdown("disconnected by the user", sess.id)
	return delErr
}

// ClearTokens forgets the bearer token and the OAuth grant and, with them,
// the session bound to them (CLI-CLEAR-ON-DISCONNECT); the session itself
// is left to expire.
func (c *Client) ClearTokens() error {
	c.mu.Lock()
	c.tok = ""
	c.mu.Unlock()
	if c.auth != nil {
		c.auth.forget()
	}
	if err := c.st.removeAll(append([]string{KeyBearerToken, KeyBearerOrigin, KeyOAuth}, sessionKeys...)); err != nil {
		return persistErr("token removal", err)
	}
	return nil
}
