package client

import (
	"context"
	"encoding/json"
)

// The spec puts a response on its request's own stream (or that stream
// resumed), never on the standalone GET. Some servers put it there anyway;
// the client then takes it, with a warning, rather than dropping it and
// waiting on the request's stream for a response that never comes.

// waiter is a request whose response may come on another stream.
type waiter struct {
	cancel context.CancelFunc
	resp   *message
}

// withStray runs f, which waits for the response to request id, and
// returns the response if it came on another stream meanwhile (f is then
// cancelled).
func (c *Client) withStray(ctx context.Context, id string, f func(context.Context) (*message, error)) (*message, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &waiter{cancel: cancel}
	c.strayMu.Lock()
	if c.waiting == nil {
		c.waiting = map[string]*waiter{}
	}
	c.waiting[id] = w
	c.strayMu.Unlock()
	resp, err := f(ctx)
	c.strayMu.Lock()
	delete(c.waiting, id)
	stray := w.resp
	c.strayMu.Unlock()
	if stray != nil {
		return stray, nil
	}
	return resp, err
}

// strayResponse hands m, a response that came on a stream other than its
// request's, to the request waiting for it. It reports false if none is.
func (c *Client) strayResponse(m *message, stream string) bool {
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return false
	}
	c.strayMu.Lock()
	defer c.strayMu.Unlock()
	w := c.waiting[id]
	if w == nil || w.resp != nil {
		return false
	}
	w.resp = m
	w.cancel()
	c.log.Warn("response on a stream other than its request's: taken, though the spec allows it only on the request's own stream", "stream", stream, "id", id)
	return true
}
