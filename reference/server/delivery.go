package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
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
//
// A refresh resets the standalone GET too, a moment after the POST (or
// before it, unnoticed). Two refinements keep what goes to the GET from
// being lost to a client that resumes only the POST stream:
//
//   - For RedirectDelay after the server finds the POST stream cut, the
//     request's notifications are held rather than written to a GET
//     connected before the cut: by then a GET reset with the POST is found
//     dead too, and a resume within it takes them.
//   - A notification written to the standalone GET is delivered once a GET
//     flushed it: the kernel took it while the connection was alive. One
//     whose write failed, or that no GET wrote, stays the request's (its
//     response waits) until a GET flushes it (a GET with Last-Event-ID
//     replays it, a fresh one's backlog has it) or the request's stream is
//     resumed. The resume, primed at once, waits at most ResumeGETWait for
//     such a GET, then replays what is left ahead of everything else.
//
// Both delays measure the network (how soon a reset shows), so they run on
// real time, like the write deadlines, not on the session clock.
//
// A GET that comes back later with a Last-Event-ID before such a
// notification, or a fresh one, leaves it out of its replay (see moved).
// Losses remain possible in one case: a notification flushed to a GET that
// the client reset, unread, longer than RedirectDelay after the POST, and
// never reconnected with its Last-Event-ID. The server cannot tell it from
// one the client read (only a Last-Event-ID acknowledges a stream), and
// counts it as delivered rather than risk sending it twice.

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
	streamID string     // the go-sdk's stream id, once the stream is opened
	calls    int        // calls not yet answered
	carrier  *carrier   // the HTTP request writing the stream, if any
	route    route      // where its calls' notifications go
	via      *getStream // the GET that took them (routeGET), in this process
	resuming bool       // a resume waits for the carrier to let go: hold
	cutAt    time.Time  // when its stream was last found cut
	// redirecting: its held notifications go to the standalone GET at
	// cutAt + redirectDelay (armRedirect)
	redirecting bool
	ids         []json.RawMessage // its calls' JSON-RPC ids, on a shared store (see leaseCalls)
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
	sess *session
	post *post
	// held are its notifications not known delivered, in order: held ones
	// (ix < 0) and those sent to the standalone stream (see settleSent).
	held  []note
	taken chan struct{} // closed when held is empty again
}

// note is a notification of a call, with what sends it on the call's stream.
type note struct {
	at     time.Time // when it was held
	ix     int       // its standalone event index once sent there, else -1
	cost   int64     // what holding it is charged to the replay store (charge)
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

// track runs a request of sess: a call carried by a POST gets a record in
// its context, which routeNotes follows, and its response waits until its
// held notifications have gone to a stream.
func track(ctx context.Context, sess *session, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	var p *post
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

// routeNotes is a sending middleware applying the delivery rule to a call's
// progress and log notifications.
func routeNotes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c, _ := ctx.Value(callKey{}).(*call)
		if c == nil || (method != "notifications/progress" && method != "notifications/message") {
			return next(ctx, method, req)
		}
		return nil, c.sess.deliver(c, note{at: c.sess.clock.Now(), ix: -1, ctx: ctx, method: method, req: req, send: next})
	}
}

// deliver sends n where its POST's route says, on the stream that took its
// earlier notifications while that is connected; else on its own stream
// while a request carries it; else on a connected standalone GET (after
// the redirect delay, for one connected before the cut); else it holds it
// (also while a resume takes the stream over).
func (s *session) deliver(c *call, n note) error {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	p := c.post
	attached := s.listening()
	switch {
	case p.route == routeGET && attached && (s.shared || p.via == s.currentGET()):
		// A GET that replaced the one that took them is a new stream:
		// while a resume takes over, they are held like the others.
		return s.redirect(c, n)
	case p.resuming:
	case p.carrier != nil:
		p.route = routeOwn
		return n.sendOwn()
	case attached && !s.shared && time.Since(p.cutAt) < s.redirectDelay && s.getAttachedBefore(p.cutAt):
		// A refresh cuts the GET too, a moment later: hold on, so that
		// what the client may never read is not written to it. A GET
		// opened since the cut is not part of it.
		p.route = routeHeld
		s.armRedirect(p)
	case attached:
		// Those held for the redirect delay go first: its timer may not
		// have run yet.
		s.redirectHeld(p)
		s.routeToGET(p)
		return s.redirect(c, n)
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
	case s.dropGap:
		return nil
	default:
		p.route = routeHeld
	}
	if !s.hold(c, n) {
		return s.toStandalone(n) // no room in memory: the store keeps it
	}
	return nil
}

// hold keeps n among c's notifications not known delivered, charged to the
// replay store's bytes (see charge); it reports false, keeping nothing, if
// there is no room for it there. s.dmu is held.
func (s *session) hold(c *call, n note) bool {
	if !s.charge(&n) {
		return false
	}
	if c.taken == nil {
		c.taken = make(chan struct{})
		if s.holding == nil {
			s.holding = map[*call]struct{}{}
		}
		s.holding[c] = struct{}{}
	}
	c.held = append(c.held, n)
	s.nheld++
	if n.ix >= 0 {
		s.nsent++
	}
	return true
}

// heldNoteCost is the memory a held notification takes beyond its params:
// the note, its slot in its call's list, the request around the params.
const heldNoteCost = 256

// charge charges holding n to the replay store's bytes (--event-max-bytes),
// as the store's own items are: its params (unless they are stored already,
// sent to the standalone stream) and heldNoteCost. It reports false if the
// store has no room for it.
func (s *session) charge(n *note) bool {
	n.cost = 0
	if s.holder == nil {
		return true
	}
	n.cost = heldNoteCost
	if n.ix < 0 {
		if b, err := json.Marshal(n.req.GetParams()); err == nil {
			n.cost += int64(len(b))
		}
	}
	return s.holder.Hold(n.cost)
}

// uncharge gives back what holding n was charged.
func (s *session) uncharge(n note) {
	if n.cost > 0 {
		s.holder.Unhold(n.cost)
	}
}

// redirect sends n on the standalone stream. Unless a GET flushed it, it
// keeps it, with its event index, until it is (see confirm): the GET it was
// written to may be dead and not noticed yet. s.dmu is held.
func (s *session) redirect(c *call, n note) error {
	n.ix = -1
	err := s.sendStandalone(eventstore.WithIndex(context.Background(), &n.ix), n)
	if n.ix > s.resumeIndex() && s.nheld < maxHeldNotes {
		s.hold(c, n) // not flushed to a GET (see confirm)
	}
	return err
}

// toStandalone sends n on the standalone stream of the current generation.
func (s *session) toStandalone(n note) error { return s.sendStandalone(context.Background(), n) }

// sendStandalone is toStandalone with ctx for the go-sdk's write, which
// passes it to the event store. It carries no call, so routeNotes passes
// the notification through.
func (s *session) sendStandalone(ctx context.Context, n note) error {
	ss := s.current().serverSession()
	if ss == nil {
		return errors.New("no transport to send on")
	}
	switch p := n.req.GetParams().(type) {
	case *mcp.ProgressNotificationParams:
		return ss.NotifyProgress(ctx, p)
	case *mcp.LoggingMessageParams:
		return ss.Log(ctx, p)
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
		// This GET's backlog has them all, those sent before included:
		// none is delivered yet, and it resumes after the last that was.
		for _, n := range c.held {
			if n.ix < 0 && !(fresh && s.clock.Since(n.at) > s.maxAge) {
				s.toStandalone(n)
			}
		}
		s.release(c)
		s.routeToGET(c.post)
	}
}

// armRedirect sends p's held notifications to the standalone GET once
// s.redirectDelay has passed since p's stream was cut, unless a resume
// took them or no GET is connected then. s.dmu is held.
func (s *session) armRedirect(p *post) {
	if p.redirecting {
		return
	}
	p.redirecting = true
	time.AfterFunc(time.Until(p.cutAt.Add(s.redirectDelay)), func() {
		s.dmu.Lock()
		defer s.dmu.Unlock()
		p.redirecting = false
		if p.resuming || p.carrier != nil || p.route != routeHeld || !s.listening() {
			return
		}
		s.redirectHeld(p)
		s.routeToGET(p)
	})
}

// redirectHeld sends the notifications of p's calls that no stream has
// taken yet to the standalone GET, in order, keeping those a GET has not
// flushed (see redirect). s.dmu is held.
func (s *session) redirectHeld(p *post) {
	for c := range s.holding {
		if c.post != p {
			continue
		}
		held := c.held
		s.release(c)
		for _, n := range held {
			if n.ix >= 0 {
				s.hold(c, n)
			} else {
				s.redirect(c, n)
			}
		}
	}
}

// carry makes a GET resuming p's stream its carrier. The request that holds
// the stream is ended first and waited for, since the go-sdk lets one request
// at a time hold a stream; the resume continues that stream (continued),
// notifications included. p stays resuming, its notifications held, until
// resumed hands them over.
func (s *session) carry(p *post, cancel context.CancelFunc) (car *carrier, continued bool, err error) {
	car = &carrier{cancel: cancel, done: make(chan struct{})}
	timeout := time.NewTimer(handoffTimeout)
	defer timeout.Stop()
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
			return nil, false, errStreamBusy
		}
	}
	defer s.dmu.Unlock()
	p.carrier, p.resuming = car, true
	return car, continued, nil
}

// resumed hands p's notifications to its resumed stream, once that has sent
// its headers. Those sent to a standalone GET that is not known to have
// delivered them are waited for, at most s.resumeWait, from a GET whose
// Last-Event-ID settles them (see acked); every one left then, and every
// held one, goes onto the stream in order, where the go-sdk's replay finds
// them ahead of anything sent later and of the response. Later
// notifications go to a standalone GET connected before it, unless the
// resume continues the stream or took notifications; else to the stream.
func (s *session) resumed(ctx context.Context, p *post, continued bool) {
	var wait <-chan time.Time
	for waited := false; ; {
		kick := s.kicker()
		s.confirm()
		s.dmu.Lock()
		if waited || s.resumeWait <= 0 || !s.sentOf(p) {
			break
		}
		s.dmu.Unlock()
		if wait == nil {
			t := time.NewTimer(s.resumeWait)
			defer t.Stop()
			wait = t.C
		}
		select {
		case <-kick:
		case <-wait:
			waited = true
		case <-ctx.Done():
			waited = true
		case <-s.ctx.Done():
			waited = true
		}
	}
	defer s.dmu.Unlock()
	p.resuming = false
	took := false
	for c := range s.holding {
		if c.post == p {
			for _, n := range c.held {
				n.sendOwn()
				if n.ix >= 0 {
					s.moved(n.ix)
				}
			}
			took = took || len(c.held) > 0
			s.release(c)
		}
	}
	if !took && !continued && p.route != routeOwn && s.listening() {
		s.routeToGET(p)
	} else {
		p.route = routeOwn
	}
}

// routeToGET sends p's notifications to the standalone stream from now on,
// as the GET attached now serves it (none, on a replica whose GET is
// another's). s.dmu is held.
func (s *session) routeToGET(p *post) {
	p.route, p.via = routeGET, s.currentGET()
}

// moved records that standalone event ix went onto a resumed POST stream
// too: a GET replaying the standalone stream leaves it out. The record is
// bounded; past it, such a GET would send it again. s.dmu is held.
func (s *session) moved(ix int) {
	if s.replayed == nil || len(s.replayed) >= maxHeldNotes {
		s.replayed = map[int]struct{}{}
	}
	s.replayed[ix] = struct{}{}
}

// unreplayed is backlog without the events that went onto a resumed POST
// stream (see moved).
func (s *session) unreplayed(backlog []eventstore.Event) []eventstore.Event {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if len(s.replayed) == 0 {
		return backlog
	}
	out := make([]eventstore.Event, 0, len(backlog))
	for _, ev := range backlog {
		if _, ok := s.replayed[ev.Index]; !ok {
			out = append(out, ev)
		}
	}
	return out
}

// sentOf reports whether a call of p has notifications sent to the
// standalone stream and not known delivered. s.dmu is held.
func (s *session) sentOf(p *post) bool {
	if s.nsent == 0 {
		return false
	}
	for c := range s.holding {
		if c.post == p && slices.ContainsFunc(c.held, func(n note) bool { return n.ix >= 0 }) {
			return true
		}
	}
	return false
}

// confirm settles the notifications sent to the standalone stream that a
// GET has written and flushed (see markDelivered): the kernel took them
// while the connection was alive, and they count as delivered, as the
// server cannot tell them from those the client read (see above).
func (s *session) confirm() {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if s.nsent == 0 {
		return
	}
	d := s.resumeIndex()
	s.settleSent(func(ix int) bool { return ix <= d })
}

// acked records a standalone GET resuming from a Last-Event-ID: of the
// notifications sent to the standalone stream, the client read those up to
// it, and this GET replays the rest. All are settled.
func (s *session) acked() {
	s.dmu.Lock()
	if s.nsent > 0 {
		s.settleSent(func(int) bool { return true })
	}
	s.dmu.Unlock()
	s.kickAll()
}

// settleSent forgets the notifications sent to the standalone stream that
// delivered says are, and lets a response go once none of its call's are
// left. s.dmu is held.
func (s *session) settleSent(delivered func(ix int) bool) {
	for c := range s.holding {
		kept := c.held[:0]
		for _, n := range c.held {
			if n.ix >= 0 && delivered(n.ix) {
				s.nheld--
				s.nsent--
				s.uncharge(n)
				continue
			}
			kept = append(kept, n)
		}
		clear(c.held[len(kept):])
		c.held = kept
		if len(kept) == 0 {
			s.release(c)
		}
	}
}

// kicker returns a channel closed at the next kickAll.
func (s *session) kicker() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kick == nil {
		s.kick = make(chan struct{})
	}
	return s.kick
}

// kickAll wakes what waits for news of the standalone stream: an event
// flushed there, or a GET resuming it.
func (s *session) kickAll() {
	s.mu.Lock()
	s.kickLocked()
	s.mu.Unlock()
}

// kickLocked is kickAll with s.mu held.
func (s *session) kickLocked() {
	if s.kick != nil {
		close(s.kick)
		s.kick = nil
	}
}

// takeReplay makes a request replaying the finished stream id its only
// replayer: the one replaying it now is ended (stop) and waited for.
func (s *session) takeReplay(id string, stop func()) (*carrier, error) {
	car := &carrier{cancel: stop, done: make(chan struct{})}
	timeout := time.NewTimer(handoffTimeout)
	defer timeout.Stop()
	for {
		s.dmu.Lock()
		old := s.replays[id]
		if old == nil {
			if s.replays == nil {
				s.replays = map[string]*carrier{}
			}
			s.replays[id] = car
			s.dmu.Unlock()
			return car, nil
		}
		s.dmu.Unlock()
		old.cancel()
		select {
		case <-old.done:
		case <-timeout.C:
			return nil, errStreamBusy
		}
	}
}

// endReplay records that car, a replay of stream id, has returned.
func (s *session) endReplay(id string, car *carrier) {
	s.dmu.Lock()
	if s.replays[id] == car {
		delete(s.replays, id)
		if len(s.replays) == 0 {
			s.replays = nil // an idle session keeps no map
		}
	}
	s.dmu.Unlock()
	close(car.done)
}

// uncarry records that car has returned.
func (s *session) uncarry(p *post, car *carrier) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if p.carrier == car {
		p.carrier = nil
		if p.calls > 0 && p.route == routeOwn {
			p.route = routeHeld // cut: see deliver and carry
			p.cutAt = time.Now()
		}
	}
	close(car.done)
	s.forgetPOST(p)
}

// release forgets c's notifications not known delivered (sent, dropped or
// settled) and lets its response go. s.dmu is held.
func (s *session) release(c *call) {
	for _, n := range c.held {
		if n.ix >= 0 {
			s.nsent--
		}
		s.uncharge(n)
	}
	s.nheld -= len(c.held)
	c.held = nil
	delete(s.holding, c)
	if c.taken != nil {
		close(c.taken)
		c.taken = nil
	}
}

// settle holds a call's response until its notifications are known
// delivered or have gone onto its stream, so that none follows the response.
// A call whose notifications went to a standalone GET that is still alive
// settles at once. If the call is cancelled or the session ends first, they
// are dropped: nobody can receive them.
func (s *session) settle(ctx context.Context, c *call) {
	for {
		s.dmu.Lock()
		held := c.taken != nil
		s.dmu.Unlock()
		if !held {
			return
		}
		kick := s.kicker()
		s.confirm()
		s.dmu.Lock()
		taken := c.taken
		s.dmu.Unlock()
		if taken == nil {
			return
		}
		select {
		case <-taken:
		case <-kick:
		case <-ctx.Done():
			s.drop(c)
			return
		case <-s.ctx.Done():
			s.drop(c)
			return
		}
	}
}

// drop forgets c's notifications not known delivered.
func (s *session) drop(c *call) {
	s.dmu.Lock()
	s.release(c)
	s.dmu.Unlock()
}
