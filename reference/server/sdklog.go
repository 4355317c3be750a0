package server

import (
	"context"
	"log/slog"
)

// demoted passes the go-sdk's records on one level down (info becomes
// debug), so the server's own lifecycle lines stand out at the default level.
type demoted struct{ slog.Handler }

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, l-4)
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level -= 4
	return d.Handler.Handle(ctx, r)
}

func (d demoted) WithAttrs(as []slog.Attr) slog.Handler { return demoted{d.Handler.WithAttrs(as)} }
func (d demoted) WithGroup(n string) slog.Handler       { return demoted{d.Handler.WithGroup(n)} }
