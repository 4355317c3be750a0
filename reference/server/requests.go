package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
)

// withRequests marks a POST's context with how many requests its body
// carries, so that the event store knows when the POST stream the go-sdk
// opens for it is finished and can drop it once its events are evicted.
func withRequests(ctx context.Context, batch []json.RawMessage) context.Context {
	return eventstore.WithRequests(ctx, countRequests(batch))
}

// postBody is a POST's body, read once and handed to the go-sdk to read again.
type postBody struct{ bytes.Reader }

func newBody(b []byte) io.ReadCloser {
	r := &postBody{}
	r.Reset(b)
	return r
}

func (*postBody) Close() error { return nil }

// countRequests counts the requests of a POST body: a single message
// counts as one (if it is not a request, no stream is opened). Counting a
// message that is not a request only keeps a stream longer, but missing
// one would let it go too early, so a batch entry that does not decode and
// one with a null id count too.
func countRequests(batch []json.RawMessage) int {
	if batch == nil {
		return 1
	}
	n := 0
	for _, m := range batch {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(m, &msg) != nil || (msg.ID != nil && msg.Method != nil) {
			n++
		}
	}
	return n
}
