package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Host serves a reference server over HTTP on a listener and owns its
// lifecycle, in the one order that ends cleanly: the sessions end first,
// which ends their hanging SSE streams, then the HTTP server. Restart
// swaps in a new Server with an empty session table behind the same
// listener, which is what a process restart on the same port loses.
//
// The embedded harness target, the client checks' scripted servers,
// `mcp-conform serve` and `mcp-conform fixture` all run on a Host.
type Host struct {
	cfg      Config
	hs       *http.Server
	url      string
	served   chan struct{} // closed when Serve returns
	serveErr error

	mu   sync.Mutex
	srv  *Server
	stop context.CancelFunc
	ran  chan struct{}
}

// HostOptions configure a Host.
type HostOptions struct {
	// Path of the MCP endpoint; default /mcp.
	Path string
	// Wrap, when set, puts a handler in front of the server (a recorder,
	// a deliberate defect). Its next always reaches the current Server,
	// across restarts.
	Wrap func(next http.Handler) http.Handler
	// Stray, when set, puts a handler in front of the answer to a request
	// for any other path than the endpoint's (a 404 naming the endpoint),
	// so a recorder sees a client that sends to the wrong URL.
	Stray func(next http.Handler) http.Handler
}

// haltTimeout bounds closing a server's sessions; each stalled stream is
// aborted within closeWait, so only a wedged handler would take this long.
const haltTimeout = 5 * time.Second

// NewHost starts a reference server configured by cfg on ln: its Run loop
// (reaper, sweeps) and the HTTP server. It fails if cfg is invalid.
func NewHost(cfg Config, ln net.Listener, o HostOptions) (*Host, error) {
	if o.Path == "" {
		o.Path = "/mcp"
	}
	h := &Host{cfg: cfg, url: "http://" + ln.Addr().String() + o.Path, served: make(chan struct{})}
	if err := h.boot(); err != nil {
		return nil, err
	}
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Server().ServeHTTP(w, r) })
	if o.Wrap != nil {
		handler = o.Wrap(handler)
	}
	mux := http.NewServeMux()
	mux.Handle(o.Path, handler)
	// Not the mux's plain-text 404: a client reading JSON-RPC gets a reason.
	var stray http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeRPCError(w, http.StatusNotFound, CodeInvalidRequest, "Not Found: the MCP endpoint is "+o.Path, nil)
	})
	if o.Stray != nil {
		stray = o.Stray(stray)
	}
	mux.Handle("/", stray)
	h.hs = h.srv.HTTPServer(mux)
	go func() { h.serveErr = h.hs.Serve(ln); close(h.served) }()
	return h, nil
}

// URL is the MCP endpoint, http://ADDR/PATH.
func (h *Host) URL() string { return h.url }

// Server is the Server serving now.
func (h *Host) Server() *Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.srv
}

// Served is closed when the HTTP server stops, by itself or by Shutdown
// or Close; ServeErr then says why.
func (h *Host) Served() <-chan struct{} { return h.served }

// ServeErr is the HTTP server's error once Served is closed; nil when it
// was shut down.
func (h *Host) ServeErr() error {
	<-h.served
	if errors.Is(h.serveErr, http.ErrServerClosed) {
		return nil
	}
	return h.serveErr
}

// boot starts a new Server with its Run loop.
func (h *Host) boot() error {
	srv, err := New(h.cfg)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { srv.Run(ctx); close(ran) }()
	h.mu.Lock()
	h.srv, h.stop, h.ran = srv, stop, ran
	h.mu.Unlock()
	return nil
}

// halt ends the current Server: its sessions, their streams and its jobs.
func (h *Host) halt() {
	h.mu.Lock()
	stop, ran := h.stop, h.ran
	h.mu.Unlock()
	stop()
	select {
	case <-ran:
	case <-time.After(haltTimeout):
		h.cfg.withDefaults().Logger.Warn("sessions did not close in time; going on")
	}
}

// Restart is a server restart on the same port: every session, event and
// job is lost, and a new, empty Server answers from now on.
func (h *Host) Restart() error {
	// The new Server takes over first: a request arriving while the old one
	// shuts down must not reach it, or a recovery hint could name a session
	// made in the table that is going away.
	h.mu.Lock()
	stop, ran := h.stop, h.ran
	h.mu.Unlock()
	if err := h.boot(); err != nil {
		return err
	}
	stop()
	<-ran
	return nil
}

// Shutdown ends the sessions, then shuts the HTTP server down gracefully;
// when ctx ends first it closes every connection instead.
func (h *Host) Shutdown(ctx context.Context) error {
	h.halt()
	if err := h.hs.Shutdown(ctx); err != nil {
		h.hs.Close()
	}
	return h.ServeErr()
}

// Close ends the sessions, then closes the listener and every connection.
func (h *Host) Close() {
	h.halt()
	h.hs.Close()
	<-h.served
}
