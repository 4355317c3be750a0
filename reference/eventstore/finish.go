package eventstore

import (
	"bytes"
	"context"
	"encoding/json"
)

type requestsKey struct{}

// WithRequests marks ctx as the context of a POST carrying n requests. The
// go-sdk opens a POST's stream with its request's context, so Open reads the
// mark: the stream is finished once n responses were appended to it, and
// once its events are evicted it is dropped for a tombstone. A stream opened
// without the mark may always get more events, so it stays until Forget.
func WithRequests(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, requestsKey{}, max(n, 0))
}

func requestsFrom(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(requestsKey{}).(int)
	return n, ok
}

var methodKey = []byte(`"method"`)

// isResponse reports whether d, one JSON-RPC message, is a response: an id
// and no method. Saying no wrongly only keeps a stream longer; saying yes
// wrongly could drop a stream that goes on, so yes is decided by decoding.
func isResponse(d []byte) bool {
	if bytes.Contains(d, methodKey) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	return json.Unmarshal(d, &m) == nil && len(m.ID) > 0 && m.Method == nil
}

// Requests returns the n of WithRequests, if ctx carries one; other stores
// use it to know when a POST stream is finished.
func Requests(ctx context.Context) (int, bool) { return requestsFrom(ctx) }
