package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The delivery rule after a cut.
//
// A request's messages (its notifications, then its response) belong on the
// POST stream that carried it. When that stream is cut, every message not
// yet written goes to the first stream that can carry it:
//
//   - the standalone GET stream, if one is connected, or is opened before
//     the request's stream is resumed: notifications only, never the
//     response (REDIRECT-ORPHANED, REDIRECT-NO-RESPONSE); it keeps them
//     while it stays connected;
//   - otherwise the request's own stream, resumed by a GET with its
//     Last-Event-ID: every held notification in order, then the rest, then
//     the response (EVT-REPLAY-POST).
//
// While neither is connected, notifications are held in memory and the
// response waits until they are taken, so that no notification of a request
// follows its response on any stream. Each message goes to one stream only,
// and the stream that took a request's notifications keeps them while it
// stays connected.
//
// "Cut" means cut as far as the server knows: a message written to a
// connection that died unnoticed is stored on the POST stream like any other,
// and resuming that stream replays it. A resume also ends the request that
// still holds the stream (the client has given up on it), so it is never
// refused because the server has not noticed the cut yet.

type postKey struct{}
type callKey struct{}

// maxHeldNotes bounds the notifications one session holds in memory; past
// it they are stored for the standalone stream, whose store is bounded.
const maxHeldNotes = 10000

// handoffTimeout bounds how long a resume waits for the request holding
// its stream to let go once ended.
const handoffTimeout = 5 * time.Second

// post is a POST that carries calls, from its arrival until its calls are
// answered and no request carries its stream.
type post struct {
	tok      string // set on the request (headerPOSTToken) for the call handlers
	gen      *generation
	streamID string            // the go-sdk's stream id, once the stream is opened
	calls    int               // calls not yet answered
	carrier  *carrier          // the HTTP request writing the stream, if any
	route    route             // where its calls' notifications go
	resuming bool              // a resume waits for the carrier to let go: hold
	ids      []json.RawMessage // its calls' JSON-RPC ids, on a shared store (see leaseCalls)
}

// route is where a POST's notifications go.
type route int

const (
	routeOwn  route = iota // its own stream, while a request carries it
	routeHeld              // cut: held until a stream comes
	routeGET               // the standalone stream, while a GET is connected
)

// carrier is an HTTP request writing a POST stream: the POST itself, then
// each GET that resumes the stream.
type carrier struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the request has returned
}

// call is one request being handled, found by its handler context.
type call struct {
	sess  *session
	post  *post
	held  []note
	taken chan struct{} // closed when held notifications have gone to a stream
}

// note is a notification of a call, with what sends it on the call's stream.
type note struct {
	at     time.Time // when it was held
	ctx    context.Context
	method string
	req    mcp.Request
	send   mcp.MethodHandler
}

func (n note) sendOwn() error {
	_, err := n.send(n.ctx, n.method, n.req)
	return err
}

// errStreamBusy answers a resume whose stream another request would not let go.
var errStreamBusy = errors.New("the request holding the stream did not let go")

// trackCalls is a receiving middleware: a call carried by a POST gets a
// record in its context, which routeNotes follows, and its response waits
// until its held notifications have gone to a stream.
func trackCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var p *post
		sess := sessionOf(ctx)
		if ex := req.GetExtra(); ex != nil && ex.Header != nil && sess != nil {
			p = sess.postFor(ex.Header.Get(headerPOSTToken))
		}
		if p == nil {
			return next(ctx, method, req)
		}
		c := &call{sess: sess, post: p}
		res, err := next(context.WithValue(ctx, callKey{}, c), method, req)
		sess.settle(ctx, c)
		return res, err
	}
}

// routeNotes is a sending middleware applying the delivery rule to a call's
// progress and log notifications.
func routeNotes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c, _ := ctx.Value(callKey{}).(*call)
		if c == nil || (method != "notifications/progress" && method != "notifications/message") {
			return next(ctx, method, req)
		}
		return nil, c.sess.deliver(c, note{at: c.sess.clock.Now(), ctx: ctx, method: method, req: req, send: next})
	}
}

// deliver sends n where its POST's route says, on the stream that took its
// earlier notifications while that is connected; else on its own stream
// while a request carries it; else on a connected standalone GET; else it
// holds it (also while a resume takes the stream over).
func (s *session) deliver(c *call, n note) error {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	p := c.post
	attached := s.listening()
	switch {
	case p.route == routeGET && attached:
		return s.toStandalone(n)
	case p.resuming:
	case p.carrier != nil:
		p.route = routeOwn
		return n.sendOwn()
	case attached:
		p.route = routeGET
		return s.toStandalone(n)
	case s.nheld >= maxHeldNotes:
		return s.toStandalone(n)
	case s.shared && p.route == routeGET:
		// The standalone stream took its notifications: the next GET,
		// on any replica, gets this one from the store too.
		return s.toStandalone(n)
	case s.shared:
		// Held in this process, a replica serving the resume would never
		// see it: store it on the call's own stream, which any replica
		// replays, in order, before the response.
		p.route = routeOwn
		return n.sendOwn()
	case s.park:
		return s.toStandalone(n)
	default:
		p.route = routeHeld
	}
	if c.taken == nil {
		c.taken = make(chan struct{})
		s.holding[c] = struct{}{}
	}
	c.held = append(c.held, n)
	s.nheld++
	return nil
}

// toStandalone sends n on the standalone stream of the current generation.
// The context carries no call, so routeNotes passes it through.
func (s *session) toStandalone(n note) error {
	ss := s.current().serverSession()
	if ss == nil {
		return errors.New("no transport to send on")
	}
	switch p := n.req.GetParams().(type) {
	case *mcp.ProgressNotificationParams:
		return ss.NotifyProgress(context.Background(), p)
	case *mcp.LoggingMessageParams:
		return ss.Log(context.Background(), p)
	}
	return n.sendOwn()
}

// flushToStandalone hands every held notification to the standalone stream;
// a GET calls it once attached, before it reads its backlog. A fresh GET
// (no Last-Event-ID) skips those older than the replay store's max age, as
// it skips evicted events; a resuming one gets them all, as it would get an
// error rather than a gap.
func (s *session) flushToStandalone(fresh bool) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	for c := range s.holding {
		if c.post.resuming {
			continue // the resume takes them
		}
		for _, n := range c.held {
			if fresh && s.clock.Since(n.at) > s.maxAge {
				continue
			}
			s.toStandalone(n)
		}
		c.post.route = routeGET
		s.release(c)
	}
}

// carry makes a GET resuming p's stream its carrier. The request that holds
// the stream is ended first and waited for, since the go-sdk lets one request
// at a time hold a stream; the resume continues that stream, notifications
// included. Otherwise, a standalone GET connected before it keeps the
// notifications, or held ones go onto the stream, where the go-sdk's replay
// finds them ahead of anything sent later.
func (s *session) carry(p *post, cancel context.CancelFunc) (*carrier, error) {
	car := &carrier{cancel: cancel, done: make(chan struct{})}
	timeout := time.NewTimer(handoffTimeout)
	defer timeout.Stop()
	continued := false
	for {
		s.dmu.Lock()
		old := p.carrier
		if old == nil {
			break
		}
		continued = continued || p.route == routeOwn
		p.resuming = true
		s.dmu.Unlock()
		old.cancel()
		select {
		case <-old.done:
		case <-timeout.C:
			s.dmu.Lock()
			p.resuming = false
			s.dmu.Unlock()
			return nil, errStreamBusy
		}
	}
	defer s.dmu.Unlock()
	p.carrier, p.resuming = car, false
	if !continued && p.route != routeOwn && s.listening() {
		p.route = routeGET
		return car, nil
	}
	p.route = routeOwn
	for c := range s.holding {
		if c.post == p {
			for _, n := range c.held {
				n.sendOwn()
			}
			s.release(c)
		}
	}
	return car, nil
}

// uncarry records that car has returned.
func (s *session) uncarry(p *post, car *carrier) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if p.carrier == car {
		p.carrier = nil
		if p.calls > 0 && p.route == routeOwn {
			p.route = routeHeld // cut: see deliver and carry
		}
	}
	close(car.done)
	s.forgetPOST(p)
}

// release forgets c's held notifications (sent or dropped) and lets its
// response go. s.dmu is held.
func (s *session) release(c *call) {
	s.nheld -= len(c.held)
	c.held = nil
	delete(s.holding, c)
	if c.taken != nil {
		close(c.taken)
		c.taken = nil
	}
}

// settle holds a call's response until its held notifications have gone to
// a stream. If the call is cancelled or the session ends first, they are
// dropped: nobody can receive them.
func (s *session) settle(ctx context.Context, c *call) {
	s.dmu.Lock()
	taken := c.taken
	s.dmu.Unlock()
	if taken == nil {
		return
	}
	select {
	case <-taken:
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
	s.dmu.Lock()
	s.release(c)
	s.dmu.Unlock()
}
