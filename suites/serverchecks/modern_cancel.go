package serverchecks

import (
	"bufio"
	"context"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// stepRun is how long one call of the stepping tool runs.
func stepRun(c *target.Profile) time.Duration {
	s := c.Tools.Stepping
	if s == nil {
		return 0
	}
	return time.Duration(s.Steps) * s.Interval.D()
}

// stepNeed: the whole run of the stepping tool, as a server that does not
// cancel runs it, and slack.
func stepNeed(c *target.Profile) time.Duration { return stepRun(c) + 2*time.Second }

// stillSteps is how many step intervals a count must hold still to count
// as stopped.
const stillSteps = 4

// closeCancels closes the response stream of a stepping call and expects
// its count to stop before the call would have finished.
func (e *env) closeCancels(ctx context.Context) {
	st := e.Config.Tools.Stepping
	key := newKey()
	read := func() int64 {
		res := e.callTool(ctx, e.C, st.Read.Name, argsWithKey(st.Read, key))
		n, ok := countOf(res)
		e.Expect(ok).To(BeTrue(), "%s answered %s: no count in structuredContent.count or its text", st.Read.Name, res)
		return n
	}
	cctx, closeStream := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer closeStream()
	caller := e.ownClient() // the call's connection is its own: closing it closes only its stream
	wg.Go(func() {
		_, _ = caller.CallModern(cctx, "tools/call", wire.ToolParams(st.Name, argsWithKey(st.Tool, key), ""), nil)
	})
	var n int64
	e.Eventually(func() int64 { n = read(); return n }).WithPolling(st.Interval.D()).Should(BeNumerically(">=", 2), "%s to count two steps", st.Name)
	e.Logf("!! closing the call's response stream at count %d of %d", n, st.Steps)
	closeStream()
	wg.Wait()
	at := read()
	last, still := at, time.Now()
	e.Eventually(func() bool {
		if c := read(); c != last {
			last, still = c, time.Now()
		}
		return time.Since(still) >= stillSteps*st.Interval.D() || last >= int64(st.Steps)
	}).WithPolling(st.Interval.D()).Should(BeTrue(), "the count to stop after the call's stream was closed (it read %d then)", at)
	e.Expect(last).To(BeNumerically("<", st.Steps), "after the harness closed the call's response stream at count %d, the call counted on to all %d steps: the server did not treat the close as cancellation", n, st.Steps)
	e.Logf("the count stopped at %d of %d (%d at the close)", last, st.Steps, n)
}

// closeSilent: with a listen stream open, a call whose stream the harness
// closes sends nothing more: not on the listen stream, not on a later
// request's stream.
func (e *env) closeSilent(ctx context.Context) {
	c := e.C
	if len(e.Config.Principals) == 2 {
		c = e.as(1) // its own principal: no other check's streams are this principal's
	}
	l := e.listen(ctx, c, "silent-"+newKey(), newKey())
	e.expectAcknowledged(l)
	k := e.modernCall(ctx, c, "silent-"+newKey())
	e.firstNote(k)
	e.Logf("!! closing the call's response stream after its first notification")
	k.post.Close()
	e.Pause(toolRun(e.Config) + quiet(e.Config)) // the rest of the call's run, had it gone on
	resp, err := c.CallModern(ctx, "server/discover", nil, nil)
	e.Expect(err).NotTo(HaveOccurred(), "server/discover after the close")
	msgs, err := resp.Messages()
	e.Expect(err).NotTo(HaveOccurred(), "server/discover's answer")
	e.Expect(e.related(msgs, k)).To(BeEmpty(), "a later request's stream carries messages of the call whose stream was closed")
	e.Expect(e.related(l.Messages(), k)).To(BeEmpty(), "the listen stream carries messages of the call whose stream was closed (and request-scoped notifications belong on no listen stream)")
}

// keepAliveNeed: a quiet listen stream held twice the declared interval.
func keepAliveNeed(c *target.Profile) time.Duration { return 2*c.Timings.KeepAlive.D() + time.Second }

// keepAlives holds a quiet listen stream and waits for a comment line.
func (e *env) keepAlives(ctx context.Context) {
	ka := e.Config.Timings.KeepAlive.D()
	req, err := e.C.NewModernRequestID(ctx, "keepalive-"+newKey(), "subscriptions/listen",
		map[string]any{"notifications": withKey(e.Config.Listen.Notifications, newKey())}, nil)
	e.Expect(err).NotTo(HaveOccurred())
	resp, err := e.C.HTTP.Do(req)
	e.Expect(err).NotTo(HaveOccurred(), "subscriptions/listen")
	defer resp.Body.Close()
	e.Expect(wire.IsSSE(resp)).To(BeTrue(), "subscriptions/listen answered HTTP %d %s, not an SSE stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	comment := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, ":") {
				comment <- line
				return
			}
		}
	}()
	began := time.Now()
	select {
	case line := <-comment:
		e.Logf("comment %q after %v", line, time.Since(began).Round(time.Millisecond))
	case <-time.After(2*ka + 500*time.Millisecond):
		e.Failf("a quiet subscriptions/listen stream went %v without a keep-alive comment (timings.keep_alive declares %v)", time.Since(began).Round(time.Millisecond), ka)
	case <-ctx.Done():
		e.Failf("a quiet subscriptions/listen stream went %v without a keep-alive comment (timings.keep_alive declares %v)", time.Since(began).Round(time.Millisecond), ka)
	}
}
