package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
)

// headerPOSTToken is set by the server on each POST carrying calls that it
// hands to the go-sdk (any client value is dropped), so that a call handler
// can find its POST (see trackCalls).
const headerPOSTToken = "Mcp-Conform-Post-Token"

// openPOST registers a POST carrying calls on g; it is its stream's first
// carrier, ended by cancel.
func (s *session) openPOST(g *generation, calls int, cancel context.CancelFunc) (*post, *carrier) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	s.postSeq++
	car := &carrier{cancel: cancel, done: make(chan struct{})}
	p := &post{tok: strconv.FormatUint(s.postSeq, 10), gen: g, calls: calls, carrier: car}
	if s.posts == nil {
		s.posts = map[string]*post{}
	}
	s.posts[p.tok] = p
	g.addOpen(calls)
	return p, car
}

// closePOST records the end of the POST request; status is what the go-sdk
// answered. A refused POST (4xx, 5xx) has no call that will be answered.
func (s *session) closePOST(p *post, car *carrier, status int) {
	if status >= http.StatusBadRequest {
		s.dmu.Lock()
		p.gen.addOpen(-p.calls)
		p.calls = 0
		s.dmu.Unlock()
	}
	s.uncarry(p, car)
}

// postFor returns the POST with the given token while its calls run.
func (s *session) postFor(tok string) *post {
	if tok == "" {
		return nil
	}
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.posts[tok]
}

// postOfStream returns the POST whose go-sdk stream is id, while it has
// calls to answer or a carrier.
func (s *session) postOfStream(id string) *post {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.streams[id]
}

// forgetPOST drops p once nothing can happen to it. s.dmu is held.
func (s *session) forgetPOST(p *post) {
	if p.calls > 0 || p.carrier != nil {
		return
	}
	delete(s.posts, p.tok)
	if p.streamID != "" && s.streams[p.streamID] == p {
		delete(s.streams, p.streamID)
	}
	// A map keeps its storage when emptied; an idle session keeps none.
	if len(s.posts) == 0 {
		s.posts = nil
	}
	if len(s.streams) == 0 {
		s.streams = nil
	}
}

// tap is the event store as one session's generations see it: it learns
// which go-sdk stream a POST opened, and when a call's response is stored,
// which is when the call is answered.
type tap struct {
	mcp.EventStore
	sess *session
}

func (t tap) Open(ctx context.Context, sessionID, streamID string) error {
	if p, ok := ctx.Value(postKey{}).(*post); ok && streamID != "" {
		t.sess.dmu.Lock()
		p.streamID = streamID
		if t.sess.streams == nil {
			t.sess.streams = map[string]*post{}
		}
		t.sess.streams[streamID] = p
		ids := p.ids
		t.sess.dmu.Unlock()
		t.sess.leaseCalls(ctx, streamID, ids)
	}
	err := t.EventStore.Open(ctx, sessionID, streamID)
	if unavailable(err) {
		// The store is out of reach: the go-sdk writes the stream live,
		// and only resuming it is lost (see tear). The standalone stream
		// (a re-initialize opens it again) is the store's, numbered there.
		if streamID != "" {
			t.sess.tear(streamID)
		}
		return nil
	}
	return err
}

func (t tap) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	var err error
	if streamID != "" && t.sess.isTorn(streamID) {
		err = errTorn
		t.sess.markTorn(t.EventStore) // in case the outage ended before it tore
	} else if err = t.EventStore.Append(ctx, sessionID, streamID, data); unavailable(err) && streamID != "" {
		t.sess.tear(streamID)
	}
	if streamID != "" && eventstore.IsResponse(data) {
		t.sess.answered(streamID)
	}
	return err
}

// errTorn refuses to store an event of a torn stream.
var errTorn = errors.New("not stored: the stream missed events while the session store was unavailable")

// answered records that a response was stored on stream id.
func (s *session) answered(id string) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	p := s.streams[id]
	if p == nil || p.calls == 0 {
		return
	}
	p.calls--
	p.gen.addOpen(-1)
	s.forgetPOST(p)
}
