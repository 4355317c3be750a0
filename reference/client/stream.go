package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// pending is a request waiting for its response on a stream.
type pending struct {
	id     string
	method string
	// rec is the stored record of a tools/call; its LastEventID follows the stream.
	rec *InFlightCall
	// lastID is the last event id seen on the request's stream.
	lastID string
	// resumed is set once the stream has been resumed: notifications may
	// then arrive on the GET stream too (see settle).
	resumed bool
	// quiet requests (the handshake) hand no notifications over.
	quiet bool
}

// source says where events come from and how to remember the position.
type source struct {
	stream    string // "call" or "standalone"
	requestID string // the request whose response ends the stream
	quiet     bool
	position  func(id string) error
}

func (p *pending) source(c *Client) source {
	return source{stream: "call", requestID: p.id, quiet: p.quiet, position: func(id string) error {
		p.lastID = id
		if p.rec == nil {
			return nil
		}
		p.rec.LastEventID = id
		if err := c.st.putInFlight(*p.rec); err != nil {
			return persistErr("call position", err)
		}
		return nil
	}}
}

// streamResult is what reading one SSE connection gave.
type streamResult struct {
	resp     *message      // the response that ends the stream, if it came
	retry    time.Duration // the server's retry field, if any
	progress bool          // at least one event with an id was handled
	err      error         // why reading stopped, other than the end
}

// consume reads a stream until it ends, the response arrives or ctx ends,
// handing every message over exactly once.
func (c *Client) consume(ctx context.Context, sess session, a *answer, src source) streamResult {
	var res streamResult
	stop := context.AfterFunc(ctx, func() { a.resp.Body.Close() })
	defer stop()
	for {
		if src.stream == "standalone" {
			c.getWaiting(true)
		}
		ev, err := a.events.Next()
		if src.stream == "standalone" {
			c.getWaiting(false)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.err = err
			}
			return res
		}
		if ev.HasRetry {
			res.retry = ev.Retry
		}
		if strings.TrimSpace(ev.Data) == "" {
			// A priming event: a position to resume from, nothing to handle.
			if ev.HasID && ev.ID != "" {
				if res.err = src.position(ev.ID); res.err != nil {
					return res
				}
				res.progress = true
			}
			continue
		}
		var m message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			c.log.Warn("undecodable SSE event", "id", ev.ID, "err", err)
			continue
		}
		if m.isResponse() {
			if src.requestID != "" && m.hasID(src.requestID) {
				res.resp = &m
				return res
			}
			if !c.strayResponse(&m, src.stream) {
				c.log.Warn("response to no pending request dropped", "stream", src.stream, "id", string(m.ID))
			}
			continue
		}
		handled, err := c.deliver(sess, src, ev.ID, &m)
		if err != nil {
			res.err = err
			return res
		}
		if ev.ID != "" {
			res.progress = true
		}
		if handled && m.isRequest() {
			c.answerServer(ctx, sess, &m)
		}
	}
}

// deliver hands one message over unless its event id was handled already.
// The position and the log are stored first, so that a kill in between
// loses a handler call rather than repeating it.
func (c *Client) deliver(sess session, src source, eventID string, m *message) (bool, error) {
	c.deliverMu.Lock()
	defer c.deliverMu.Unlock()
	if eventID != "" && c.seen.has(sess.gen, eventID) {
		c.log.Debug("duplicate event dropped", "id", eventID)
		return false, nil
	}
	if m.Method == "notifications/message" && !src.quiet {
		if err := c.st.appendLog(LogEntry{EventID: eventID, Params: m.Params, At: c.clk.Now()}, c.opts.MaxLogs); err != nil {
			return false, persistErr("log", err)
		}
	}
	if eventID != "" {
		if err := src.position(eventID); err != nil {
			return false, err
		}
		c.seen.add(sess.gen, eventID)
	}
	if src.quiet || m.isRequest() {
		return true, nil
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	if c.opts.OnNotification != nil {
		c.opts.OnNotification(Notification{Method: m.Method, Params: m.Params, EventID: eventID, Stream: src.stream, RequestID: src.requestID})
	}
	return true, nil
}

// follow reads the stream of request p until its response, resuming it by
// GET with Last-Event-ID after each cut, after the server's retry delay if
// it gave one (CLI-RESUME, CLI-RETRY-FIELD). a nil a starts with a resume.
func (c *Client) follow(ctx context.Context, sess session, a *answer, p *pending) (*message, error) {
	delay := c.opts.ReconnectDelay
	for {
		if a != nil {
			res := c.consume(ctx, sess, a, p.source(c))
			a.close()
			if res.resp != nil {
				if p.resumed {
					c.settle(ctx)
				}
				return res.resp, nil
			}
			if ctx.Err() != nil {
				return nil, ctxError(ctx, p.method)
			}
			if pe := (*persistError)(nil); errors.As(res.err, &pe) {
				return nil, res.err
			}
			if p.lastID == "" {
				return nil, fmt.Errorf("%s %s: stream ended before the response and before any event id, so it cannot be resumed (%v)", p.method, p.id, res.err)
			}
			wait := delay
			switch {
			case res.retry > 0:
				wait = res.retry
			case res.progress:
				delay = c.opts.ReconnectDelay
				wait = delay
			default:
				delay = c.backoff(delay)
			}
			c.log.Debug("stream cut; resuming", "request", p.id, "after", p.lastID, "wait", wait, "err", res.err)
			if !c.sleep(ctx, wait) {
				return nil, ctxError(ctx, p.method)
			}
		}
		p.resumed = true
		var err error
		a, err = c.send(ctx, http.MethodGet, sess, nil, p.lastID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, p.method)
			}
			c.log.Debug("resume failed; retrying", "request", p.id, "err", err)
			a = nil
			if !c.sleep(ctx, delay) {
				return nil, ctxError(ctx, p.method)
			}
			delay = c.backoff(delay)
			continue
		}
		if a.events != nil {
			continue
		}
		if g := gone(a, sess); g != nil {
			return nil, g
		}
		if a.status == http.StatusConflict || a.status >= 500 {
			// The server has not let go of the cut connection yet, or hiccupped.
			a = nil
			if !c.sleep(ctx, delay) {
				return nil, ctxError(ctx, p.method)
			}
			delay = c.backoff(delay)
			continue
		}
		return nil, fmt.Errorf("%s %s: resuming after %s: %w", p.method, p.id, p.lastID, unexpected(a))
	}
}

// settle gives notifications the server sent on the GET stream before a
// resumed call's response (on another connection) the time to be handed
// over first, so that the result comes last: it waits for the GET stream
// to be open (it may be reconnecting after the same cut), then until its
// reader has handled everything that had arrived and waited on the
// network for Settle since the result (under load, handling takes longer).
func (c *Client) settle(ctx context.Context) {
	if c.opts.Settle <= 0 {
		return
	}
	start := c.clk.Now()
	limit := c.clk.NewTimer(c.opts.MaxReconnectDelay + c.opts.Settle)
	defer limit.Stop()
	for {
		c.mu.Lock()
		running, open, waiting, changed := c.getRunning, c.getOpen, c.getWaitingSince, c.getChanged
		c.mu.Unlock()
		var quiet clock.Timer
		var quietC <-chan time.Time
		switch {
		case running == 0:
			return
		case open > 0 && !waiting.IsZero():
			if waiting.Before(start) {
				waiting = start // what arrives with the result counts too
			}
			left := c.opts.Settle - c.clk.Since(waiting)
			if left <= 0 {
				return
			}
			quiet = c.clk.NewTimer(left)
			quietC = quiet.C()
		}
		done := false
		select {
		case <-changed:
		case <-quietC: // the next round finds it quiet long enough
		case <-limit.C():
			done = true
		case <-ctx.Done():
			done = true
		}
		if quiet != nil {
			quiet.Stop()
		}
		if done {
			return
		}
	}
}
