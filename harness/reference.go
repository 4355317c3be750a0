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

	"github.com/mcp-conform/mcp-conform/reference/fast"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/target"
)

// ReferenceProfile is the built-in target profile of the embedded
// reference server (the same as package fast's).
func ReferenceProfile() *target.Config { return fast.Profile() }

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
	cfg := fast.Config()
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
