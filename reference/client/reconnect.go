package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// reconnectOp is one replacement of a lost session, shared by every request
// that found the session gone, so a burst of failures reconnects once and
// reports one "reconnected".
type reconnectOp struct {
	done chan struct{}
	// hint takes a server-named session id that arrives while the op still
	// waits to initialize: adopting it is quicker.
	hint chan string
	sess session
	err  error
}

// replace gets a session to use instead of failed, which the server no
// longer knows: the id the server named in its 404 (CLI-RESTART-HINT, no
// wait), or a fresh initialize after ReconnectWait (CLI-404-REINIT). The
// caller's cancel ends its wait at once (CLI-CANCEL-WAIT); the replacement
// itself carries on for the client's other users.
func (c *Client) replace(ctx context.Context, failed session, g *SessionGoneError) (session, error) {
	adopt, reason := "", "session expired"
	if g != nil {
		adopt, reason = g.NewSessionID, g.Error()
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return session{}, ErrClosed
	}
	if c.sess.gen != failed.gen {
		// Already replaced: the retry goes to the new session.
		s := c.sess
		c.mu.Unlock()
		return s, nil
	}
	op := c.recon
	if op == nil {
		op = &reconnectOp{done: make(chan struct{}), hint: make(chan string, 1)}
		c.recon = op
		c.mu.Unlock()
		if !c.goTracked(func() { c.runReconnect(op, failed, adopt, reason) }) {
			return session{}, ErrClosed
		}
	} else {
		c.mu.Unlock()
		if adopt != "" {
			select {
			case op.hint <- adopt:
			default:
			}
		}
	}
	select {
	case <-op.done:
		return op.sess, op.err
	case <-ctx.Done():
		return session{}, ctxError(ctx, "waiting to reconnect")
	}
}

func (c *Client) runReconnect(op *reconnectOp, failed session, adopt, reason string) {
	defer close(op.done)
	c.stopStandalone()
	c.emit(StatusEvent{Status: Reconnecting, SessionID: failed.id, Reason: reason})
	sess, adopted, err := c.newSession(op, failed, adopt)
	if err == nil {
		sess, err = c.install(sess, true)
	}
	c.mu.Lock()
	c.recon = nil
	c.mu.Unlock()
	if err != nil {
		op.err = fmt.Errorf("reconnecting: %w", err)
		if !errors.Is(err, ErrClosed) {
			c.emit(StatusEvent{Status: Disconnected, SessionID: failed.id, Err: op.err, Reason: "reconnect failed"})
		}
		return
	}
	op.sess = sess
	how := "new session"
	if adopted {
		how = "adopted the server's new session"
	}
	c.emit(StatusEvent{Status: Connected, SessionID: sess.id, ProtocolVersion: sess.version, Reconnected: true, NewSession: true, Reason: how})
	c.startStandalone(sess, nil)
}

// newSession adopts a server-named session at once, or initializes one
// after ReconnectWait unless a server-named one turns up meanwhile.
func (c *Client) newSession(op *reconnectOp, failed session, adopt string) (session, bool, error) {
	if adopt == "" && c.opts.ReconnectWait > 0 {
		t := c.clk.NewTimer(c.opts.ReconnectWait)
		select {
		case <-t.C():
		case adopt = <-op.hint:
			t.Stop()
		case <-c.life.Done():
			t.Stop()
			return session{}, false, ErrClosed
		}
	}
	if adopt != "" {
		// Initialized by the server with the protocol version we sent.
		return session{id: adopt, version: failed.version}, true, nil
	}
	sess, err := c.initialize(c.life, session{})
	return sess, false, err
}

// noteHint keeps a resume hint until a call of its method uses it.
func (c *Client) noteHint(h *ResumeHint) {
	if h == nil {
		return
	}
	c.mu.Lock()
	c.pendingHint = h
	c.watch[h.Via] = true
	c.mu.Unlock()
	if err := c.st.setJSON(KeyResumeHint, h); err != nil {
		c.log.Warn("cannot persist resume hint", "err", err)
	}
}

// applyHint adds the stored resume token to a call of the pending hint's
// method that lacks one (CLI-ENVELOPE), and reports whether it did.
func (c *Client) applyHint(op *operation) bool {
	if op.method != "tools/call" {
		return false
	}
	c.mu.Lock()
	h := c.pendingHint
	c.mu.Unlock()
	if h == nil || h.Method != op.tool {
		return false
	}
	tok := c.st.conversation()[h.Via]
	if tok == "" {
		return false
	}
	args, ok := op.argsObject()
	if !ok {
		return false
	}
	if _, has := args[h.Via]; !has {
		quoted, _ := json.Marshal(tok)
		args[h.Via] = quoted
		op.setArgs(args)
	}
	c.mu.Lock()
	if c.pendingHint == h {
		c.pendingHint = nil
	}
	c.mu.Unlock()
	if err := c.st.set(KeyResumeHint, ""); err != nil {
		c.log.Warn("cannot persist resume hint", "err", err)
	}
	c.log.Info("continuing the conversation with the stored resume token", "tool", op.tool, "via", h.Via)
	return true
}
