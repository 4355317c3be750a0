package client

import (
	"context"
	"net/http"
	"time"
)

// startStandalone (re)starts the runner of sess's standalone GET stream;
// first is a stream the rejoin already opened.
func (c *Client) startStandalone(sess session, first *answer) {
	c.mu.Lock()
	if c.closed || c.sess.gen != sess.gen || sess.id == "" {
		c.mu.Unlock()
		first.close()
		return
	}
	if c.getCancel != nil {
		c.getCancel()
	}
	ctx, cancel := context.WithCancel(c.life)
	c.getCancel = cancel
	c.mu.Unlock()
	c.countGet(1, 0) // before it runs, so that awaitGET waits for it
	if !c.goTracked(func() { c.runStandalone(ctx, sess, first) }) {
		c.countGet(-1, 0)
		cancel()
		first.close()
	}
}

// awaitGET waits until a standalone GET stream is open or has been since
// the newest runner started (true), or no runner
// is at work (false: the server refused it, or the client is closing), or
// the limit or ctx ends.
func (c *Client) awaitGET(ctx context.Context, limit time.Duration) bool {
	t := c.clk.NewTimer(limit)
	defer t.Stop()
	for {
		c.mu.Lock()
		running, open, changed := c.getRunning, c.getOpen, c.getChanged
		opened := c.getOpens > c.getOpensAtStart
		c.mu.Unlock()
		switch {
		case open > 0, opened:
			return true
		case running == 0:
			return false
		}
		select {
		case <-changed:
		case <-t.C():
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (c *Client) stopStandalone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getCancel != nil {
		c.getCancel()
		c.getCancel = nil
	}
}

// getWaiting records whether the standalone reader waits on the network
// (true) or handles what arrived (false), and wakes settle.
func (c *Client) getWaiting(waiting bool) {
	c.mu.Lock()
	if waiting {
		c.getWaitingSince = c.clk.Now()
	} else {
		c.getWaitingSince = time.Time{}
	}
	close(c.getChanged)
	c.getChanged = make(chan struct{})
	c.mu.Unlock()
}

// countGet adds to the runner counts and wakes settle.
func (c *Client) countGet(running, open int) {
	c.mu.Lock()
	c.getRunning += running
	c.getOpen += open
	if open > 0 {
		c.getOpens++
	}
	if running > 0 {
		c.getOpensAtStart = c.getOpens
	}
	close(c.getChanged)
	c.getChanged = make(chan struct{})
	c.mu.Unlock()
}

// runStandalone keeps the session's GET stream open: after every end or
// cut it waits the server's retry delay (or its own, growing while nothing
// comes) and resumes after the last event handled. A 404 means the session
// is gone: the client replaces it, which starts a new runner.
func (c *Client) runStandalone(ctx context.Context, sess session, a *answer) {
	defer c.countGet(-1, 0) // counted by startStandalone
	delay := c.opts.ReconnectDelay
	src := source{stream: "standalone", position: func(id string) error {
		c.mu.Lock()
		current := c.sess.gen == sess.gen
		c.mu.Unlock()
		if !current {
			return nil
		}
		if err := c.st.set(KeyLastEventID, id); err != nil {
			return persistErr("last event id", err)
		}
		return nil
	}}
	for ctx.Err() == nil {
		if a == nil {
			var err error
			a, err = c.send(ctx, http.MethodGet, sess, nil, c.st.get(KeyLastEventID))
			if err != nil {
				c.log.Debug("standalone GET failed", "err", err)
				if !c.sleep(ctx, delay) {
					return
				}
				delay = c.backoff(delay)
				continue
			}
		}
		if a.events != nil {
			c.countGet(0, 1)
			res := c.consume(ctx, sess, a, src)
			c.countGet(0, -1)
			a.close()
			a = nil
			wait := delay
			switch {
			case res.retry > 0:
				wait = res.retry // CLI-RETRY-FIELD: exactly the server's delay
			case res.progress:
				delay = c.opts.ReconnectDelay
				wait = delay
			default:
				delay = c.backoff(delay)
			}
			c.log.Debug("standalone stream ended", "wait", wait, "err", res.err)
			if !c.sleep(ctx, wait) {
				return
			}
			continue
		}
		if g := gone(a, sess); g != nil {
			c.log.Info("session gone (standalone GET)", "session", sess.id)
			c.noteHint(g.Resume)
			c.goTracked(func() { c.replace(c.life, sess, g) })
			return
		}
		if a.status == http.StatusMethodNotAllowed {
			c.log.Info("server offers no standalone GET stream")
			return
		}
		if replayReason(a) != "" {
			// The stored position cannot be replayed: ask for new messages only.
			if err := c.st.set(KeyLastEventID, ""); err != nil {
				c.log.Warn("cannot persist", "err", err)
				return
			}
			a = nil
			continue
		}
		c.log.Debug("standalone GET refused", "err", unexpected(a))
		a = nil
		if !c.sleep(ctx, delay) {
			return
		}
		delay = c.backoff(delay)
	}
}
