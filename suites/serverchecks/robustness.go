package serverchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// slowAnswer is the size of the answer the stalled client does not read:
// a ping whose string id is this long. It is far more than the socket
// buffers between a target and the fault proxy hold unless the target's
// kernel grows them to megabytes (Linux does on loopback), so the target's
// writes to that stream block.
const slowAnswer = 1 << 20

// slowStarted is how many bytes of the unread answer the proxy must have
// taken before the check goes on: the target is writing it by then (the
// stalled GET stream's keep-alives stay far below it).
const slowStarted = 2048

// promptBound bounds a request that has no reason to wait for a stalled
// stream: one on another connection of the session.
const promptBound = 5 * time.Second

// defaultWriteTimeout is assumed when the profile declares no
// timings.write_timeout: the reference server's default.
const defaultWriteTimeout = 10 * time.Second

// closeBound bounds a request that ends a stalled stream (a replacing GET,
// DELETE): the target may wait for its write deadline to abort the write
// in progress first.
func closeBound(c *target.Profile) time.Duration {
	wt := c.Timings.WriteTimeout.D()
	if wt <= 0 {
		wt = defaultWriteTimeout
	}
	return wt + promptBound
}

// slowReaderNeed is what SLOW-READER needs at most against a target that
// behaves: a prompt request and two that end stalled streams.
func slowReaderNeed(c *target.Profile) time.Duration { return promptBound + 2*closeBound(c) }

// robustnessChecks are the robustness checks.
func robustnessChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "SLOW-READER", Level: catalogue.Res, Section: "robustness", Revisions: catalogue.WithSessions, Stateless: true, Exclusive: true, SpecRef: catalogue.ResilienceProfile + "slow-readers",
			Summary: "A client that stops reading one stream does not block the session's other requests, a replacement GET or DELETE (on a stateless target: the client's other requests)."},
			need: slowReaderNeed, body: func(ctx context.Context, e *env) {
				p := e.needProxy()
				sid := e.connect(ctx, e.C)
				e.openStandalone(ctx, sid)

				// First, unstalled, the target shows that it answers such a ping.
				ping := bigPing()
				resp, err := e.ownClient().Post(ctx, sid, ping.body)
				e.Expect(err).NotTo(HaveOccurred(), "ping with a %d-byte id", slowAnswer)
				if m, err := resp.Result(); resp.Status != http.StatusOK || err != nil || m.Error != nil || string(m.ID) != ping.id {
					e.Skipf(report.Unobservable, "the target does not answer a ping with a %d-byte string id (HTTP %d): it cannot be made to write that much to one stream", slowAnswer, resp.Status)
				}
				// A connection of its own carries the answer nobody will read.
				// It has carried little so far, so its receive buffer is small
				// (a kernel grows a socket's buffer as its reader keeps up).
				slow := e.ownClient()
				e.expectWorks(ctx, slow, sid)

				e.stall()
				sctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = slow.Post(sctx, sid, bigPing().body) // never read: the client stopped reading
				}()
				e.Cleanup(func(context.Context) { cancel(); <-done })
				e.Eventually(p.Stalled).Should(BeNumerically(">=", slowStarted),
					"the target starting its %d-byte answer on the stalled connection", slowAnswer)
				e.Logf("the target is writing to the stalled connection; the GET stream, if any, is stalled too")

				e.within(ctx, promptBound, "tools/list on another connection of the client", func(ctx context.Context) {
					e.expectWorks(ctx, e.C, sid)
				})
				if sid == "" {
					// A stateless target: no session to end, and a replacing
					// GET replaces nothing.
					e.Logf("the target is stateless: no replacing GET or DELETE to time")
					return
				}
				e.within(ctx, closeBound(e.Config), "a GET replacing the stalled standalone stream", func(ctx context.Context) {
					s, err := e.C.OpenGET(ctx, sid, "")
					if isStatus(err, http.StatusConflict) {
						e.Logf("the replacing GET got 409 (GET-LIVE-REPLACED is about that); it was not blocked")
						return
					}
					e.Expect(err).NotTo(HaveOccurred(), "GET replacing the stalled standalone stream")
					s.Close()
				})
				e.within(ctx, closeBound(e.Config), "DELETE of the session", func(ctx context.Context) {
					del, err := e.C.Delete(ctx, sid)
					e.Expect(err).NotTo(HaveOccurred(), "DELETE")
					if del.Status == http.StatusMethodNotAllowed {
						e.Logf("DELETE got 405: the target does not let clients end sessions; it was not blocked")
						return
					}
					e.Expect(del.Status).To(BeNumerically("~", 250, 50), "DELETE status must be 2xx")
				})
			}},
	}
}

// openStandalone opens the standalone GET stream that SLOW-READER stalls
// with the rest. A target with sessions must offer one (a 405 skips the
// check, which then cannot time the replacing GET); a stateless target
// need not, and the check goes on without it.
func (e *env) openStandalone(ctx context.Context, sid string) {
	if sid != "" {
		e.openGET(ctx, e.C, sid, "")
		return
	}
	s, err := e.get(ctx, e.C, sid, "")
	if isStatus(err, http.StatusMethodNotAllowed) {
		e.Logf("the target answers GET with 405: no standalone stream to stall")
		return
	}
	e.Expect(err).NotTo(HaveOccurred(), "GET stream")
	e.collect("GET", s)
}

// within runs f with a context that ends after d, and fails the check with
// what was blocked if f's requests did not finish by then.
func (e *env) within(ctx context.Context, d time.Duration, what string, f func(ctx context.Context)) {
	bctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			if bctx.Err() != nil && ctx.Err() == nil {
				e.Failf("%s: no answer within %v while another of the client's streams was not read: the stalled stream blocks the client's other requests", what, d)
			}
			panic(r)
		}
	}()
	f(bctx)
	if bctx.Err() != nil && ctx.Err() == nil && errors.Is(bctx.Err(), context.DeadlineExceeded) {
		e.Failf("%s: no answer within %v while another of the client's streams was not read", what, d)
	}
}

// bigPingBody is a ping whose string id is slowAnswer bytes long.
type bigPingBody struct {
	id   string // the id as JSON text
	body []byte
}

func bigPing() bigPingBody {
	id, _ := json.Marshal(rand.Text() + strings.Repeat("x", slowAnswer))
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "ping"})
	return bigPingBody{id: string(id), body: body}
}

// ownClient returns a client with a transport (so connections) of its own,
// with the check's headers and exchange log.
func (e *env) ownClient() *wire.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
	}
	e.Cleanup(func(context.Context) { tr.CloseIdleConnections() })
	c := wire.New(e.C.URL)
	c.FollowRedirects = e.target.FollowRedirects
	c.HTTP = &http.Client{Transport: &kit.Recorder{Base: tr, Log: e.Log()}, CheckRedirect: wire.RedirectPolicy(c.FollowRedirects)}
	c.ProtocolVersion = e.target.ProtocolVersion
	c.Stateless = e.stateless()
	c.Header = e.Config.RequestHeader()
	return c
}
