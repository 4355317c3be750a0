package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/conformance"
	"github.com/mcp-conform/mcp-conform/reference/tools"
)

// Version is reported in the InitializeResult's serverInfo.
const Version = "0.1.0"

// legacyVersions are the protocol revisions with sessions, the only ones a
// stateful server can speak (2026-07-28 removed sessions).
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// generation is one go-sdk transport serving a session. The stock handler
// refuses a second initialize and cannot reuse an id, so transport
// recreation (RECREATE-*) starts a new generation: a fresh mcp.Server and
// StreamableHTTPHandler whose single session takes the table's id. The
// handler stays in charge of the protocol: headers, POST streams and their
// replay; the server opens the standalone stream (see serveStandalone).
//
// A generation replaced by a re-initialize is retired, not closed: it goes
// on serving the requests that reached it and answering its calls, whose
// streams stay resumable, and closes once it is idle. Closing it earlier
// would lose those answers (the go-sdk refuses writes on a closing
// connection).
type generation struct {
	srv     *mcp.Server
	handler *mcp.StreamableHTTPHandler
	log     *slog.Logger
	onClose func() // after the go-sdk session has closed

	mu      sync.Mutex
	serving int  // HTTP requests it is serving
	open    int  // calls on its POST streams not yet answered
	retired bool // replaced: close once idle
	closed  bool
}

func (s *Server) newGeneration(sess *session) *generation {
	opts := &mcp.ServerOptions{
		GetSessionID:              func() string { return sess.id },
		SupportedProtocolVersions: legacyVersions,
		SchemaCache:               s.schemas,
		Logger:                    s.sdkLog,
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{},
		},
	}
	if s.cfg.ConformanceTools {
		conformance.Configure(opts)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcp-conform-reference", Version: Version}, opts)
	srv.AddReceivingMiddleware(defaultLogLevel, s.callLimit(sess), sess.trackCalls, s.announceTasks)
	srv.AddSendingMiddleware(sess.routeNotes)
	tools.Register(srv, tools.Deps{
		Session: sess,
		Jobs:    s.jobs,
		Clock:   s.cfg.Clock,
		Logger:  s.log,
	})
	if s.cfg.ConformanceTools {
		conformance.Register(srv, conformance.Options{Retry: s.cfg.SSERetry})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		EventStore:          tap{EventStore: s.events, sess: sess},
		MaxRequestBodyBytes: s.cfg.MaxBodyBytes,
		Logger:              s.sdkLog,
	})
	g := &generation{srv: srv, handler: h, log: s.log}
	g.onClose = func() { sess.forgetGeneration(g) }
	sess.addGeneration(g)
	return g
}

// serverSession returns the generation's go-sdk session, nil before a
// successful initialize or after close.
func (g *generation) serverSession() *mcp.ServerSession {
	for ss := range g.srv.Sessions() {
		return ss
	}
	return nil
}

// acquire counts a request served by g; it reports false once g is closed.
func (g *generation) acquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.serving++
	return true
}

// release ends a request counted by acquire.
func (g *generation) release() {
	g.mu.Lock()
	g.serving--
	g.mu.Unlock()
	g.closeIfIdle()
}

// addOpen counts calls opened (n > 0) or answered (n < 0) on g's streams.
func (g *generation) addOpen(n int) {
	g.mu.Lock()
	g.open += n
	g.mu.Unlock()
	g.closeIfIdle()
}

// retire marks g replaced: it closes once idle.
func (g *generation) retire() {
	g.mu.Lock()
	g.retired = true
	g.mu.Unlock()
	g.closeIfIdle()
}

// closeIfIdle closes a retired g that serves nothing and owes no answer;
// deciding and marking it closed under one lock, so that no request
// acquires it in between.
func (g *generation) closeIfIdle() {
	g.mu.Lock()
	idle := g.retired && !g.closed && g.serving == 0 && g.open <= 0
	g.closed = g.closed || idle
	g.mu.Unlock()
	if idle {
		g.shutdown()
	}
}

// close shuts the generation down now, whatever it is doing (the session
// is gone).
func (g *generation) close() {
	g.mu.Lock()
	was := g.closed
	g.closed = true
	g.mu.Unlock()
	if !was {
		g.shutdown()
	}
}

// shutdown closes the go-sdk session in the background: the go-sdk waits
// for running handlers to return first.
func (g *generation) shutdown() {
	go func() {
		if ss := g.serverSession(); ss != nil {
			if err := ss.Close(); err != nil {
				g.log.Debug("closing transport generation", "err", err)
			}
		}
		if g.onClose != nil {
			g.onClose()
		}
	}()
}

// defaultLogLevel sets the log level to info at initialize, so tool log lines
// reach clients that never call logging/setLevel; a client's own setLevel
// still overrides it.
func defaultLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "initialize" && err == nil {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{
					Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "info"},
				})
			}
		}
		return res, err
	}
}
