package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// operation is one request the user asked for; a retry sends it again as a
// new request (new id) to the new session.
type operation struct {
	method string
	params any
	// tools/call
	tool string
	args json.RawMessage
	// resume is the stored call whose stream the first attempt resumes.
	resume *InFlightCall
}

// objectArgs returns a call's arguments as sent: {} for none (empty or
// null), since servers that validate params with a schema refuse null.
func objectArgs(args json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`)
	}
	return args
}

func (op *operation) argsObject() (map[string]json.RawMessage, bool) {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(objectArgs(op.args), &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func (op *operation) setArgs(m map[string]json.RawMessage) {
	if data, err := json.Marshal(m); err == nil {
		op.args = data
	}
}

// do runs op with the recovery rules:
//   - a 404 for the session (CLI-404-REINIT, CLI-RESTART-HINT, CLI-ENVELOPE):
//     a new session, then exactly one more try, with the resume token added
//     to a call of the envelope's resume.method;
//   - an allow-listed session-expired error on one of the five operations
//     (CLI-RETRY-ONCE): the same;
//   - a call the server accepted whose session then ended: not re-run,
//     unless a resume hint says how to continue it.
//
// The retry goes to the new session, and its error, if any, is the one
// returned: there is no second retry. A cancel, at any point, is returned
// as a cancel (IsCancelled) and never retried.
func (c *Client) do(ctx context.Context, op *operation) (*message, error) {
	ctx, cancel := c.bind(ctx)
	defer cancel()
	sess, err := c.current()
	if err != nil {
		return nil, err
	}
	c.applyHint(op)
	resp, err := c.attempt(ctx, sess, op)
	if err == nil || IsCancelled(err) || errors.Is(err, ErrClosed) {
		return resp, err
	}
	var g *SessionGoneError
	var lost *CallLostError
	switch {
	case errors.As(err, &lost):
		errors.As(lost.Cause, &g)
		if g != nil {
			c.noteHint(g.Resume)
		}
		next, rerr := c.replace(ctx, sess, g)
		if rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		if !c.applyHint(op) {
			return nil, err
		}
		sess = next
	case errors.As(err, &g):
		c.noteHint(g.Resume)
		if sess, err = c.replace(ctx, sess, g); err != nil {
			return nil, err
		}
		c.applyHint(op)
	case retryOnceMethods[op.method] && isSessionExpired(err):
		c.log.Info("session-expired error; reconnecting and retrying once", "method", op.method, "err", err)
		if sess, err = c.replace(ctx, sess, nil); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	c.log.Debug("retrying once on the new session", "method", op.method, "session", sess.id)
	return c.attempt(ctx, sess, op)
}

// attempt sends op once to sess and waits for its response. JSON-RPC
// errors are returned as *RPCError.
func (c *Client) attempt(ctx context.Context, sess session, op *operation) (*message, error) {
	p := &pending{method: op.method}
	var resp *message
	var err error
	if op.resume != nil {
		rec := *op.resume
		op.resume = nil // a retry is a new request
		p.id, p.rec, p.lastID = rec.RequestID, &rec, rec.LastEventID
		resp, err = c.withStray(ctx, p.id, func(ctx context.Context) (*message, error) {
			m, err := c.follow(ctx, sess, nil, p)
			return m, lostIfGone(p, err)
		})
	} else {
		p.id = c.newID()
		params := op.params
		if op.tool != "" {
			rec := InFlightCall{RequestID: p.id, Tool: op.tool, Arguments: op.args, ProgressToken: "p-" + p.id, SessionID: sess.id, Started: c.clk.Now()}
			if err := c.st.putInFlight(rec); err != nil {
				return nil, persistErr("call", err)
			}
			p.rec = &rec
			params = map[string]any{"name": op.tool, "arguments": objectArgs(op.args), "_meta": map[string]any{"progressToken": rec.ProgressToken}}
		}
		resp, err = c.withStray(ctx, p.id, func(ctx context.Context) (*message, error) {
			return c.post(ctx, sess, p, request(p.id, op.method, params))
		})
	}
	if p.rec != nil {
		c.endCall(sess, p, err)
	}
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp, nil
}

// post sends a request and follows its answer.
func (c *Client) post(ctx context.Context, sess session, p *pending, body any) (*message, error) {
	a, err := c.send(ctx, http.MethodPost, sess, body, "")
	if err != nil {
		return nil, err
	}
	if g := gone(a, sess); g != nil {
		return nil, g // never reached the session: safe to send again
	}
	switch {
	case a.events != nil:
		resp, err := c.follow(ctx, sess, a, p)
		return resp, lostIfGone(p, err)
	case a.status == http.StatusOK:
		return readJSONResponse(a, p.id)
	default:
		return nil, unexpected(a)
	}
}

// lostIfGone: once the server accepted a call, a 404 means the call's
// outcome went with the session.
func lostIfGone(p *pending, err error) error {
	var g *SessionGoneError
	if p.rec != nil && errors.As(err, &g) {
		return &CallLostError{RequestID: p.id, Tool: p.rec.Tool, Cause: g}
	}
	return err
}

// endCall updates the stored call: gone once it has an outcome, kept when
// the client is closing with it unfinished (a later client resumes it).
func (c *Client) endCall(sess session, p *pending, err error) {
	switch {
	case errors.Is(err, ErrClosed):
		return
	case IsCancelled(err):
		c.cancelOnServer(sess, p.id)
	}
	if derr := c.st.dropInFlight(p.id); derr != nil {
		c.log.Warn("cannot persist", "err", derr)
	}
}

// cancelTimeout bounds the cancelled notification; Close waits for it.
const cancelTimeout = 5 * time.Second

// cancelOnServer tells the server the user cancelled the request: a dropped
// connection alone is not a cancel. It outlives Close (by cancelTimeout at
// most), which is what a cancelled command line tool does next.
func (c *Client) cancelOnServer(sess session, id string) {
	c.goTracked(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		a, err := c.send(ctx, http.MethodPost, sess, notification("notifications/cancelled", map[string]any{"requestId": id, "reason": "cancelled by the user"}), "")
		if err == nil {
			a.close()
		}
	})
}

// goTracked runs f in a goroutine that Close waits for, unless closed.
func (c *Client) goTracked(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// Request sends any request and returns its result, with the recovery rules
// of do (the retry-once rule only for the five operations it names). A
// tools/call sent this way is not stored for ResumeCall: use CallTool.
func (c *Client) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.modern() {
		m, ok := params.(map[string]any)
		if !ok {
			m = map[string]any{}
			if data, err := json.Marshal(params); err != nil || json.Unmarshal(data, &m) != nil {
				return nil, fmt.Errorf("%s: params must be a JSON object", method)
			}
		}
		if _, err := c.current(); err != nil {
			return nil, err
		}
		var hdr http.Header
		if name, ok := m["name"].(string); ok && method == "tools/call" {
			args, _ := json.Marshal(m["arguments"])
			var err error
			if hdr, err = c.paramHeadersFor(ctx, name, objectArgs(args)); err != nil {
				return nil, err
			}
		}
		res, _, err := c.modernCall(ctx, method, m, hdr)
		return res, err
	}
	resp, err := c.do(ctx, &operation{method: method, params: params})
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}
