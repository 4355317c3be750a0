package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// ListenFilter is subscriptions/listen's notifications parameter: the
// change notifications the client opts in to.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Empty reports a filter that opts in to nothing.
func (f ListenFilter) Empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// ErrListenNeedsModern: subscriptions/listen exists only in the
// sessionless revision.
var ErrListenNeedsModern = errors.New("subscriptions/listen needs protocol version " + ModernProtocolVersion)

// errListenDropped: a listen stream ended without the listen's response,
// an unexpected disconnect.
var errListenDropped = errors.New("listen stream ended without the subscription's completion response")

// Listen keeps one subscriptions/listen stream open (2026-07-28) and hands
// the notifications it delivers to OnNotification (Stream "listen",
// RequestID the listen's id). A stream that ends without the listen's
// response is an unexpected disconnect, which the specification lets the
// client treat as a trigger to reconnect: Listen waits ReconnectDelay
// (doubling up to MaxReconnectDelay while listens fail before their
// acknowledgement) and listens again with a new request, one stream at a
// time. It returns nil when the server ends the subscription gracefully
// (the completion response), the error of a listen the server refuses,
// or the cancel of ctx.
func (c *Client) Listen(ctx context.Context, filter ListenFilter) error {
	if !c.modern() {
		return fmt.Errorf("%w; the server speaks %s", ErrListenNeedsModern, c.revision())
	}
	if filter.Empty() {
		return errors.New("subscriptions/listen: the filter opts in to no notification")
	}
	ctx, cancel := c.bind(ctx)
	defer cancel()
	delay := c.opts.ReconnectDelay
	for {
		acked, err := c.listenOnce(ctx, filter)
		switch {
		case ctx.Err() != nil:
			return ctxError(ctx, "listen")
		case !errors.Is(err, errListenDropped):
			return err
		}
		if acked {
			delay = c.opts.ReconnectDelay
		}
		c.log.Info("listen stream dropped; listening again", "err", err, "after", delay)
		if !c.sleep(ctx, delay) {
			return ctxError(ctx, "listen")
		}
		if !acked {
			delay = c.backoff(delay)
		}
	}
}

// listenOnce sends one subscriptions/listen and reads its stream to its
// end; acked says whether the server acknowledged it.
func (c *Client) listenOnce(ctx context.Context, filter ListenFilter) (acked bool, err error) {
	a, id, err := c.modernSend(ctx, "subscriptions/listen", map[string]any{"notifications": filter}, nil)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			// The request did not get through (a reset, a refused
			// connection): a drop like any other, retried after the delay.
			return false, fmt.Errorf("%w: %v", errListenDropped, err)
		}
		return false, err
	}
	defer a.close()
	switch {
	case a.events == nil && a.status != http.StatusOK:
		return false, fmt.Errorf("subscriptions/listen: %w", modernRefusal(a))
	case a.events == nil:
		return false, fmt.Errorf("subscriptions/listen answered %d %.200s, not an event stream", a.status, a.body)
	}
	for {
		ev, err := a.events.Next()
		if err != nil {
			if ctx.Err() != nil {
				return acked, ctxError(ctx, "listen")
			}
			return acked, fmt.Errorf("listen %s: %w (%v)", id, errListenDropped, err)
		}
		var m message
		if json.Unmarshal([]byte(ev.Data), &m) != nil {
			continue
		}
		switch {
		case m.isResponse() && m.hasID(id):
			if m.Error != nil {
				return acked, fmt.Errorf("subscriptions/listen: %w", m.Error)
			}
			c.log.Info("the server ended the subscription gracefully", "listen", id)
			return acked, nil
		case m.Method == "notifications/subscriptions/acknowledged":
			acked = true
			c.log.Debug("listen acknowledged", "listen", id, "params", string(m.Params))
		case m.Method != "" && !m.isRequest() && c.opts.OnNotification != nil:
			c.cbMu.Lock()
			c.opts.OnNotification(Notification{Method: m.Method, Params: m.Params, EventID: ev.ID, Stream: "listen", RequestID: id})
			c.cbMu.Unlock()
		}
	}
}
