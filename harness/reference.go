package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/target"
)

// Short timings of the embedded reference server, so the grace and
// eviction checks take seconds. The profile below declares the same values.
var referenceConfig = server.Config{
	ReaperInterval:       200 * time.Millisecond,
	IdleThreshold:        time.Second,
	GracePeriod:          time.Second,
	EventMaxAge:          2 * time.Second,
	EventCleanupInterval: 250 * time.Millisecond,
	SSEKeepAlive:         500 * time.Millisecond,
	SSERetry:             500 * time.Millisecond,
	RecoveryHint:         true,
	BearerTokens:         map[string]string{"alice-token": "alice", "bob-token": "bob"},
}

// ReferenceProfile is the built-in target profile of the reference server
// with the timings above (also the example profile in README).
func ReferenceProfile() *target.Config {
	c := &target.Config{
		Tools: target.Tools{
			Notifying: &target.NotifyingTool{
				Tool:          target.Tool{Name: "long_operation", Arguments: map[string]any{"steps": 5, "interval_ms": 200}},
				Method:        target.DefaultNotificationMethod,
				Notifications: 5,
				Interval:      target.Duration(200 * time.Millisecond),
			},
			Stateful: &target.Tool{Name: "counter_increment"},
		},
		Timings: target.Timings{
			IdleThreshold:        target.Duration(referenceConfig.IdleThreshold),
			GracePeriod:          target.Duration(referenceConfig.GracePeriod),
			ReaperInterval:       target.Duration(referenceConfig.ReaperInterval),
			EventMaxAge:          target.Duration(referenceConfig.EventMaxAge),
			EventCleanupInterval: target.Duration(referenceConfig.EventCleanupInterval),
		},
		Principals:   []target.Principal{{Name: "alice", Token: "alice-token"}, {Name: "bob", Token: "bob-token"}},
		Origins:      target.Origins{Allowed: "http://localhost:3000", Disallowed: "https://evil.example"},
		RecoveryHint: true,
	}
	return c
}

// referenceTarget is the reference server run in-process on a loopback
// port; Restart brings up a new server (empty session table) on the same port.
type referenceTarget struct {
	addr string
	log  *slog.Logger
	srv  *server.Server
	hs   *http.Server
	stop context.CancelFunc
	ran  chan struct{}
}

// startReference starts the embedded reference server on a free port.
func startReference(log io.Writer) (*referenceTarget, error) {
	rt := &referenceTarget{addr: "127.0.0.1:0", log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if err := rt.start(); err != nil {
		return nil, err
	}
	return rt, nil
}

// URL is the endpoint of the running server.
func (rt *referenceTarget) URL() string { return "http://" + rt.addr + "/mcp" }

func (rt *referenceTarget) start() error {
	cfg := referenceConfig
	cfg.Logger = rt.log
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := listenRetry(rt.addr)
	if err != nil {
		return fmt.Errorf("embedded reference server: %w", err)
	}
	rt.addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	rt.srv, rt.hs = srv, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := context.WithCancel(context.Background())
	rt.stop, rt.ran = stop, make(chan struct{})
	go func() { srv.Run(ctx); close(rt.ran) }()
	go func() { _ = rt.hs.Serve(ln) }()
	return nil
}

// Close stops the server: sessions first (which ends their streams), then
// the listener and every connection.
func (rt *referenceTarget) Close() {
	rt.stop()
	<-rt.ran
	rt.hs.Close()
}

// Restart is F-RESTART for the embedded server: every session is lost.
func (rt *referenceTarget) Restart(context.Context) error {
	rt.Close()
	return rt.start()
}

// listenRetry listens on addr, retrying briefly while a just-closed
// listener's port is still held.
func listenRetry(addr string) (net.Listener, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
