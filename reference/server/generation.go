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
// recreation (RECREATE-*) starts a new generation: a fresh
// StreamableHTTPHandler whose single session takes the table's id. The
// handler stays in charge of the protocol: headers, POST streams and their
// replay; the server opens the standalone stream (see serveStandalone).
//
// Every generation serves the Server's one go-sdk Server (see
// newSDKServer): registering the tools per session cost more than the rest
// of a session's setup. What a handler needs of its session it finds
// through its request's context (sessionOf).
//
// A generation replaced by a re-initialize is retired, not closed: it goes
// on serving the requests that reached it and answering its calls, whose
// streams stay resumable, and closes once it is idle. Closing it earlier
// would lose those answers (the go-sdk refuses writes on a closing
// connection).
type generation struct {
	sess    *session
	handler sdkHandler
	log     *slog.Logger
	onClose func() // after the go-sdk session has closed

	mu sync.Mutex
	ss *mcp.ServerSession // once its initialize succeeded, until closed
	// initialized: its initialize succeeded (it stays so once closed,
	// which a re-initialize may do before the initialize's request returns)
	initialized bool
	serving     int  // HTTP requests it is serving
	open        int  // calls on its POST streams not yet answered
	retired     bool // replaced: close once idle
	closed      bool
}

// newSDKServer builds the go-sdk Server that every session's generations
// share, with the reference tools.
func (s *Server) newSDKServer() *mcp.Server {
	opts := &mcp.ServerOptions{
		GetSessionID:              s.ids.take,
		SupportedProtocolVersions: s.sessionRevisions(),
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
	srv.AddReceivingMiddleware(s.receive)
	srv.AddSendingMiddleware(routeNotes)
	tools.Register(srv, tools.Deps{
		Session: toolSession,
		Jobs:    s.jobs,
		Clock:   s.cfg.Clock,
		Logger:  s.log,
	})
	if s.cfg.ConformanceTools {
		conformance.Register(srv, conformance.Options{Retry: s.cfg.SSERetry})
	}
	return srv
}

func (s *Server) newGeneration(sess *session) *generation {
	g := &generation{sess: sess, log: s.log}
	g.handler = sdkHandler{g: g, ids: &s.ids, h: mcp.NewStreamableHTTPHandler(s.sdkFor, &mcp.StreamableHTTPOptions{
		EventStore:          tap{EventStore: s.events, sess: sess},
		MaxRequestBodyBytes: s.cfg.MaxBodyBytes,
		Logger:              s.sdkLog,
	})}
	g.onClose = func() { sess.forgetGeneration(g) }
	sess.addGeneration(g)
	return g
}

// sdkHandler is a generation's go-sdk handler. A POST without a session id
// makes the go-sdk create its session: its id is handed over to
// GetSessionID, and the generation rides in the request's context, which
// the go-sdk keeps for every handler of that session.
type sdkHandler struct {
	g   *generation
	ids *idHandoff
	h   *mcp.StreamableHTTPHandler
}

func (h sdkHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" {
		h.create(w, r)
		return
	}
	h.h.ServeHTTP(w, r)
}

// create serves the initialize that creates the go-sdk session. Apart from
// ServeHTTP, whose frame stays on every standalone GET's stack.
//
//go:noinline
func (h sdkHandler) create(w http.ResponseWriter, r *http.Request) {
	defer h.ids.withdraw(h.ids.offer(h.g.sess.id))
	h.h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), generationKey{}, h.g)))
}

type generationKey struct{}

// sessionOf returns the session whose go-sdk handler runs with ctx, nil
// outside one.
func sessionOf(ctx context.Context) *session {
	if g, ok := ctx.Value(generationKey{}).(*generation); ok {
		return g.sess
	}
	return nil
}

// toolSession is sessionOf for the tools.
func toolSession(ctx context.Context) tools.Session {
	if sess := sessionOf(ctx); sess != nil {
		return sess
	}
	return nil
}

// idHandoff passes the id of the session being created to the shared
// go-sdk Server's GetSessionID, which takes no argument. The go-sdk calls
// it from the ServeHTTP of the initialize that creates the session, before
// reading the body; one offer is pending at a time, from offer until the
// id is taken or withdrawn, which is microseconds.
type idHandoff struct {
	gate    sync.Mutex // held while an offer is pending
	mu      sync.Mutex
	id      string
	pending uint64 // the pending offer, 0 if none
	last    uint64
}

// offer makes id the next one taken and returns the offer's ticket.
func (h *idHandoff) offer(id string) uint64 {
	h.gate.Lock()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last++
	h.id, h.pending = id, h.last
	return h.last
}

// take is GetSessionID: the pending offer's id. Without one (never, as
// only a generation's handler creates sessions) it returns "", for which
// the go-sdk makes a session it closes after the request.
func (h *idHandoff) take() string {
	h.mu.Lock()
	id, ok := h.id, h.pending != 0
	h.id, h.pending = "", 0
	h.mu.Unlock()
	if ok {
		h.gate.Unlock()
	}
	return id
}

// withdraw ends the offer with ticket t if the go-sdk did not take it (it
// refused the request first).
func (h *idHandoff) withdraw(t uint64) {
	h.mu.Lock()
	mine := h.pending == t
	if mine {
		h.id, h.pending = "", 0
	}
	h.mu.Unlock()
	if mine {
		h.gate.Unlock()
	}
}

// initializeSucceeded reports whether the generation's initialize
// succeeded, whether or not it has been closed since.
func (g *generation) initializeSucceeded() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.initialized
}

// serverSession returns the generation's go-sdk session, nil before a
// successful initialize or after close.
func (g *generation) serverSession() *mcp.ServerSession {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ss
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
			g.mu.Lock()
			g.ss = nil
			g.mu.Unlock()
		}
		if g.onClose != nil {
			g.onClose()
		}
	}()
}

// receive is the reference's receiving middleware: it limits the calls a
// session runs (reserveCall), tracks a POST's calls (track), announces
// tasks (announce), and completes a successful initialize (below). One
// middleware, not one per concern: every request's goroutine runs under
// it, and each frame more is stack that grows, is copied and is scanned.
func (s *Server) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		sess := sessionOf(ctx)
		if method == "tools/call" && sess != nil {
			if err := s.reserveCall(sess); err != nil {
				return nil, err
			}
			defer sess.calls.Add(-1)
		}
		res, err := track(ctx, sess, method, req, next)
		if err != nil {
			return res, err
		}
		res = s.announce(res)
		if method == "initialize" {
			initialized(ctx, req, next)
		}
		return res, nil
	}
}

// initialized completes a successful initialize: it sets the log level to
// info, so tool log lines reach clients that never call logging/setLevel
// (a client's own setLevel still overrides it), and records the
// generation's go-sdk session.
func initialized(ctx context.Context, req mcp.Request, next mcp.MethodHandler) {
	ss, ok := req.GetSession().(*mcp.ServerSession)
	if !ok {
		return
	}
	next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{
		Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "info"},
	})
	if g, _ := ctx.Value(generationKey{}).(*generation); g != nil {
		g.mu.Lock()
		if g.ss == nil {
			g.ss = ss
		}
		g.initialized = true
		g.mu.Unlock()
	}
}
