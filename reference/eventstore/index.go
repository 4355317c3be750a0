package eventstore

import "context"

type indexKey struct{}

// WithIndex makes Append, given ctx, record in *ix the index it gives an
// event of the standalone stream (id ""): the server learns where a
// notification it sends there can be resumed from.
func WithIndex(ctx context.Context, ix *int) context.Context {
	return context.WithValue(ctx, indexKey{}, ix)
}
