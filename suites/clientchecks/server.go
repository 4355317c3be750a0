package clientchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// serverOpts configure a client check's scripted server.
type serverOpts struct {
	// plain answers an unknown session id with a plain 404 (-32001
	// "Session not found") instead of the -32003 envelope.
	plain bool
	// hint answers a stale session id with 404 plus a new, initialized
	// session's id (recovery hint).
	hint bool
	// token is a bearer token the server requires (empty: none).
	token string
}

// hook sees every request before the reference server does; it returns
// true when it answered the request itself.
type hook func(x *exchange, w http.ResponseWriter, r *http.Request) bool

// scriptedServer is the reference server behind a recording middleware
// whose hook a check scripts: expire a session at a chosen request, answer
// with an error, hold a request, close a stream with a retry field, or
// restart the server (a new, empty session table on the same port).
type scriptedServer struct {
	cfg     server.Config
	token   string
	rec     *clientRecorder
	url     string
	host    *server.Host
	next    http.Handler // the reference server, across restarts
	closing chan struct{}
	// cors is the origin of the page under test ("" for a process).
	cors string

	mu   sync.Mutex
	hook hook
	// era is the one revision the server still speaks after a restart
	// (revision.go); "" is both.
	era string
	// refusal is the error a server of 2026-07-28 alone answers a request
	// of an older revision with (revision.go); 0 is -32022.
	refusal int
}

// clientServerConfig is the reference server of client checks: the
// production timings for sessions (a session never expires by itself
// during a check) and short ones for streams.
func clientServerConfig(o serverOpts) server.Config {
	cfg := server.Config{
		ReaperInterval:  10 * time.Second,
		IdleThreshold:   time.Minute,
		GracePeriod:     time.Minute,
		SSERetry:        500 * time.Millisecond,
		ExpiredResponse: server.ExpiredEnvelope,
		// Tasks suggest this poll interval (CLI-TASK-POLL-INTERVAL).
		TaskPollInterval: taskPoll,
		// Its listen streams send notifications/tools/list_changed
		// (CLI-LISTEN-AGAIN), so it says it may.
		ToolsListChanged: true,
		RecoveryHint:     o.hint,
		Logger:           slog.New(slog.DiscardHandler),
	}
	if o.plain {
		cfg.ExpiredResponse = server.ExpiredPlain
	}
	if o.token != "" {
		cfg.BearerTokens = map[string]string{o.token: "user"}
	}
	return cfg
}

// startScripted starts a check's scripted server; origin, when not "",
// is the origin of the page under test, which may call it (CORS).
func startScripted(o serverOpts, rec *clientRecorder, origin string) (*scriptedServer, error) {
	s := &scriptedServer{cfg: clientServerConfig(o), token: o.token, rec: rec, closing: make(chan struct{}), cors: origin}
	if origin != "" {
		s.cfg.AllowedOrigins = []string{origin}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h, err := server.NewHost(s.cfg, ln, server.HostOptions{Wrap: func(next http.Handler) http.Handler {
		s.next = next
		return s
	}, Stray: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec.stray(r)
			next.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.host, s.url = h, h.URL()
	return s, nil
}

// restart is F-RESTART: every session is lost; the port stays.
func (s *scriptedServer) restart() error {
	s.rec.logf("!! F-RESTART: the server restarts with an empty session table")
	return s.host.Restart()
}

// close stops everything, releasing held requests first.
func (s *scriptedServer) close() {
	close(s.closing)
	s.host.Close()
}

func (s *scriptedServer) setHook(h hook) {
	s.mu.Lock()
	s.hook = h
	s.mu.Unlock()
}

func (s *scriptedServer) currentHook() hook {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hook
}

func (s *scriptedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.preflight(w, r) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	x := s.rec.add(r, body)
	cw := &captureWriter{ResponseWriter: w, rec: s.rec, x: x}
	defer func() {
		s.rec.update(x, func(x *exchange) { x.Done = time.Now() })
		s.rec.mark(x, report.KindEnd, "", fmt.Sprintf("#%d   end", x.N))
	}()
	if h := s.currentHook(); h != nil && h(x, cw, r) {
		return
	}
	if s.refuseEra(x, cw) {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if cw.cut != nil {
		cw.cut.cancel = cancel
	}
	s.next.ServeHTTP(cw, r.WithContext(ctx))
}

// expire ends a session for good, as the reaper or an operator would:
// from now on its id gets 404 (the envelope or the plain answer).
func (s *scriptedServer) expire(x *exchange, sid string) {
	req := httptest.NewRequest(http.MethodDelete, s.url, nil)
	req.Header.Set(wire.HeaderSessionID, sid)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	rr := httptest.NewRecorder()
	s.host.Server().ServeHTTP(rr, req)
	s.rec.note(x, "the server expired session %s before answering (%d)", sid, rr.Code)
}

// cutWhen arms x's answer to close, with retry, right after the first SSE
// event that until matches.
func (s *scriptedServer) cutWhen(w http.ResponseWriter, until func(sseEvent) bool, retry time.Duration) {
	cw := w.(*captureWriter)
	cw.cut = &cutSpec{until: until, retry: retry, cancel: func() {}}
}

// hold keeps a request waiting for an answer until the client gives up
// (or the check ends): a server that is slow to give a new session.
func (s *scriptedServer) hold(x *exchange, r *http.Request) {
	s.rec.note(x, "held: no answer until the client gives up")
	select {
	case <-r.Context().Done():
	case <-s.closing:
	}
}

// holdUntil keeps a request unanswered until release is closed, and
// reports true then: the caller lets it through, so what the client does
// next is seen. It reports false when the client gave up first.
func (s *scriptedServer) holdUntil(x *exchange, r *http.Request, release <-chan struct{}) bool {
	s.rec.note(x, "held: no answer until the step the check waits for")
	select {
	case <-release:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// rpcError answers a request with a JSON-RPC error (HTTP 200).
func (s *scriptedServer) rpcError(x *exchange, w http.ResponseWriter, code int, msg string) {
	s.rec.note(x, "answered with JSON-RPC error %d %q", code, msg)
	id := x.RPC.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Header().Set("Content-Type", wire.MediaTypeJSON)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// refuse answers 400 with a JSON-RPC error: the server will not let the
// client rejoin that session.
func (s *scriptedServer) refuse(x *exchange, w http.ResponseWriter) {
	s.rec.note(x, "refused: this session cannot be rejoined")
	w.Header().Set("Content-Type", wire.MediaTypeJSON)
	w.WriteHeader(http.StatusBadRequest)
	fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Bad Request: this session cannot be rejoined"},"id":null}`)
}

// preflight lets the page under test read what the server answers (CORS):
// its session id and the headers a client must see. It answers a CORS
// preflight itself, unrecorded: the browser sends it, not the client.
func (s *scriptedServer) preflight(w http.ResponseWriter, r *http.Request) bool {
	if s.cors == "" || r.Header.Get("Origin") != s.cors {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", s.cors)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", r.Header.Get("Access-Control-Request-Headers"))
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
