package eventstore

import "context"

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

// Requests returns the n of WithRequests, if ctx carries one; other stores
// use it to know when a POST stream is finished.
func Requests(ctx context.Context) (int, bool) { return requestsFrom(ctx) }
