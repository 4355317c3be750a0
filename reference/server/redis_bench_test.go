package server_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/redisstore"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// benchRedisServer is benchServer on a Redis store.
func benchRedisServer(b *testing.B) *wire.Client {
	rs := redistest.Start(b)
	st, err := redisstore.New(context.Background(), redisstore.Options{URL: rs.URL(0), MaxBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{SSEKeepAlive: -1, EventMaxBytes: 1 << 30, AnonymousSessionRate: 1e6, AnonymousSessionBurst: 1 << 20, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() { srv.Close(); hs.CloseClientConnections(); hs.Close(); st.Close() })
	return wire.New(hs.URL)
}

// BenchmarkToolCall: one counter_increment call, end to end over HTTP, on
// each store: what the Redis store adds to a request.
func BenchmarkToolCall(b *testing.B) {
	for _, tc := range []struct {
		name  string
		setup func(*testing.B) *wire.Client
	}{
		{"memory", func(b *testing.B) *wire.Client { _, c := benchServer(b); return c }},
		{"redis", benchRedisServer},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.setup(b)
			ctx := context.Background()
			sid, err := c.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.ToolText(ctx, sid, "counter_increment", map[string]any{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReplay10kRedis is BenchmarkReplay10k on the Redis store: the
// 10,000 events come from Redis.
func BenchmarkReplay10kRedis(b *testing.B) { benchReplay10k(b, benchRedisServer(b)) }
