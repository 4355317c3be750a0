package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	return t.EventStore.Open(ctx, sessionID, streamID)
}

func (t tap) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	err := t.EventStore.Append(ctx, sessionID, streamID, data)
	if streamID != "" && isResponse(data) {
		t.sess.answered(streamID)
	}
	return err
}

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

// notePrefix starts every notification the go-sdk writes (it encodes
// "jsonrpc", "id", "method" in this order): one with it has a top-level
// method, no decoding needed.
var notePrefix = []byte(`{"jsonrpc":"2.0","method":`)

// idPrefix starts every response and request the go-sdk writes; "result",
// "error" or "method" follows the id.
var idPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// isResponse reports whether data is a JSON-RPC response: it has a result
// or an error, and no method. What the go-sdk writes is told by its first
// keys, without decoding (every message is stored, and a decoder allocates
// dozens of times per message); anything else is decoded.
func isResponse(data []byte) bool {
	if bytes.HasPrefix(data, notePrefix) {
		return false // a notification, most of what a stream carries
	}
	if rest, ok := bytes.CutPrefix(data, idPrefix); ok {
		if n := idLen(rest); n > 0 {
			switch after := rest[n:]; {
			case bytes.HasPrefix(after, []byte(`,"result":`)), bytes.HasPrefix(after, []byte(`,"error":`)):
				return true
			case bytes.HasPrefix(after, []byte(`,"method":`)):
				return false
			}
		}
	}
	return decodedIsResponse(data)
}

// idLen is the length of the JSON string or number b starts with, 0 when
// it starts with neither.
func idLen(b []byte) int {
	if len(b) > 0 && b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	n := 0
	for n < len(b) && strings.IndexByte("+-.0123456789eE", b[n]) >= 0 {
		n++
	}
	return n
}

// decodedIsResponse is isResponse by decoding: only the top-level keys are
// read, up to the first that decides.
func decodedIsResponse(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		switch k {
		case "method":
			return false
		case "result", "error":
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
