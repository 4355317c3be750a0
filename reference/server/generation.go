package server

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
type generation struct {
	srv     *mcp.Server
	handler *mcp.StreamableHTTPHandler
	// answered is closed once the initialize the generation was made for
	// has been served: closing the generation waits for it, so a
	// re-initialize that replaces it never cuts its InitializeResult short.
	answered chan struct{}
}

func (s *Server) newGeneration(sess *session) *generation {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcp-conform-reference", Version: Version}, &mcp.ServerOptions{
		GetSessionID:              func() string { return sess.id },
		SupportedProtocolVersions: legacyVersions,
		SchemaCache:               s.schemas,
		Logger:                    s.sdkLog,
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{},
		},
	})
	srv.AddReceivingMiddleware(defaultLogLevel, s.callLimit(sess))
	tools.Register(srv, tools.Deps{
		Session: sess,
		Jobs:    s.jobs,
		Notify:  notifier{s: s, sess: sess},
		Clock:   s.cfg.Clock,
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		EventStore:          s.events,
		MaxRequestBodyBytes: s.cfg.MaxBodyBytes,
		Logger:              s.sdkLog,
	})
	return &generation{srv: srv, handler: h, answered: make(chan struct{})}
}

// serveInitialize serves the initialize the generation was made for.
func (g *generation) serveInitialize(w http.ResponseWriter, r *http.Request) {
	defer g.markAnswered()
	g.handler.ServeHTTP(w, r)
}

// markAnswered records that the generation's initialize has been served.
func (g *generation) markAnswered() { close(g.answered) }

// serverSession returns the generation's go-sdk session, nil before a
// successful initialize or after close.
func (g *generation) serverSession() *mcp.ServerSession {
	for ss := range g.srv.Sessions() {
		return ss
	}
	return nil
}

// close shuts the generation down once its initialize has been answered.
// The go-sdk waits for running handlers to return first, so a tool outlives
// the transport it started on.
func (g *generation) close(log *slog.Logger) {
	go func() {
		<-g.answered
		if ss := g.serverSession(); ss != nil {
			if err := ss.Close(); err != nil {
				log.Debug("closing transport generation", "err", err)
			}
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
