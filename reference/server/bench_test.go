package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

func benchServer(b *testing.B) (*server.Server, *wire.Client) {
	// Anonymous clients on one address: the new-session rate must not be
	// what a benchmark measures.
	srv, err := server.New(server.Config{SSEKeepAlive: -1, EventMaxBytes: 1 << 30, AnonymousSessionRate: 1e6, AnonymousSessionBurst: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() { srv.Close(); hs.CloseClientConnections(); hs.Close() })
	return srv, wire.New(hs.URL)
}

// BenchmarkReplay10k: a GET with Last-Event-ID replaying 10,000 events of a
// POST stream (a long_operation of 5,000 steps), end to end over HTTP.
func BenchmarkReplay10k(b *testing.B) {
	_, c := benchServer(b)
	benchReplay10k(b, c)
}

// benchReplay10k runs a 5,000-step long_operation on c, then measures
// replaying its 10,000 events.
func benchReplay10k(b *testing.B, c *wire.Client) {
	ctx := context.Background()
	sid, err := c.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := c.Call(ctx, sid, "tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 5000, "interval_ms": 0}, "tok"))
	if err != nil || len(resp.Events) != 10002 {
		b.Fatalf("setup: %v, %d events", err, len(resp.Events))
	}
	first := resp.Events[0].ID // the priming event: replay everything after it
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := c.NewHTTPRequest(ctx, http.MethodGet, sid, nil)
		req.Header.Set(wire.HeaderLastEventID, first)
		got, err := c.Do(req)
		if err != nil || len(got.Events) != 10001 {
			b.Fatalf("replay: %v, %d events", err, len(got.Events))
		}
	}
}

// BenchmarkIdleSessionMemory reports the heap held by one initialized, idle
// session (its table entry, go-sdk session and transport, empty event streams).
func BenchmarkIdleSessionMemory(b *testing.B) {
	const n = 200
	for b.Loop() {
		srv, c := benchServer(b)
		ctx := context.Background()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			if _, err := c.Connect(ctx); err != nil {
				b.Fatalf("session %d: %v", i, err)
			}
		}
		c.HTTP.CloseIdleConnections()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if srv.SessionCount() != n {
			b.Fatal(fmt.Sprint("sessions: ", srv.SessionCount()))
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/session")
	}
}

// BenchmarkNotification: one progress notification and one log line through
// the routing, the event store and the SSE stream (a 1-step long_operation
// per iteration, so it includes one call's overhead).
func BenchmarkNotification(b *testing.B) {
	_, c := benchServer(b)
	ctx := context.Background()
	sid, err := c.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Call(ctx, sid, "tools/call", wire.ToolParams("long_operation", map[string]any{"steps": 1, "interval_ms": 0}, "tok"))
		if err != nil || len(resp.Events) != 4 {
			b.Fatalf("%v, %d events", err, len(resp.Events))
		}
	}
}

// BenchmarkSessionSetup: what a client does to join, end to end over HTTP:
// initialize, notifications/initialized, and the standalone GET stream up
// to its priming event.
func BenchmarkSessionSetup(b *testing.B) {
	_, c := benchServer(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sid, err := c.Connect(ctx)
		if err != nil {
			b.Fatal(err)
		}
		st, err := c.OpenGET(ctx, sid, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Next(); err != nil {
			b.Fatal(err)
		}
		st.Close()
	}
}
