package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/conformance"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
	"github.com/mcp-conform/mcp-conform/reference/tools"
)

// The sessionless revision: no initialize and no sessions; every request
// names its version in the MCP-Protocol-Version header and in
// _meta["io.modelcontextprotocol/protocolVersion"]. Closing a response
// stream cancels its request, so a call that must outlive its connection
// runs as a task of the io.modelcontextprotocol/tasks extension.
const (
	modernVersion   = "2026-07-28"
	tasksExtension  = "io.modelcontextprotocol/tasks"
	headerMcpName   = "Mcp-Name"
	headerMcpMethod = "Mcp-Method"
	metaVersion     = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps  = "io.modelcontextprotocol/clientCapabilities"
	// CodeHeaderMismatch: a header disagrees with the body (Mcp-Name,
	// MCP-Protocol-Version); CodeMissingCapability: the request needs a
	// client capability it did not declare.
	CodeHeaderMismatch    = -32020
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion: the request names a protocol version the
	// server does not speak; data lists the ones it does.
	CodeUnsupportedVersion = -32022
)

// speaksModern reports a request in the sessionless revision, or of its
// era in a version the server does not speak (see modernEra).
func speaksModern(r *http.Request) bool {
	return r.Header.Get(headerProtocolVersion) == modernVersion || modernEra(r)
}

// modern serves the sessionless revision: the go-sdk's stateless handler,
// with one mcp.Server per principal (its tools act for that principal),
// and the tasks extension in front of it.
type modern struct {
	handler *mcp.StreamableHTTPHandler
	listens *listenHub
	mu      sync.Mutex
	servers map[string]*mcp.Server
	// sealer signs the requestState of the conformance fixtures.
	sealer *conformance.Sealer
	// inputs holds the *taskInput of each conformance fixture task.
	inputs sync.Map
	// inflight counts each client's requests (MaxSessionlessPerClient).
	inflight inflight
}

// modernPrincipalKey carries the request's principal to getServer.
type modernPrincipalKey struct{}

func (s *Server) newModern() *modern {
	m := &modern{servers: map[string]*mcp.Server{}, listens: newListenHub(), sealer: conformance.NewSealer(s.cfg.Clock.Now),
		inflight: inflight{n: map[string]int{}}}
	m.handler = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		principal, _ := r.Context().Value(modernPrincipalKey{}).(string)
		return s.modernServer(m, principal)
	}, &mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: s.cfg.MaxBodyBytes, Logger: s.sdkLog,
		// Closing a response stream cancels its request (2026-07-28).
		PropagateRequestCancellation: true})
	return m
}

// modernServer returns principal's go-sdk server, made on first use.
func (s *Server) modernServer(m *modern, principal string) *mcp.Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	if srv := m.servers[principal]; srv != nil {
		return srv
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: s.cfg.ToolsListChanged}}
	caps.AddExtension(tasksExtension, nil)
	opts := &mcp.ServerOptions{
		SupportedProtocolVersions: s.cfg.supportedRevisions(),
		SchemaCache:               s.schemas,
		Logger:                    s.sdkLog,
		Capabilities:              caps,
	}
	if s.cfg.ConformanceTools {
		// The fixtures' lists never change: no listChanged.
		caps.Prompts = &mcp.PromptCapabilities{}
		conformance.ConfigureStateless(opts)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcp-conform-reference", Version: Version}, opts)
	srv.AddReceivingMiddleware(s.announceTasks)
	sess := &modernSession{principal: principal}
	tools.Register(srv, tools.Deps{Session: func(context.Context) tools.Session { return sess }, Jobs: s.jobs, Clock: s.cfg.Clock, Logger: s.log})
	tools.RegisterTally(srv, &sess.tallies, s.cfg.Clock, func(name string) { m.listens.updated(principal, tools.TallyURI(name)) })
	if s.cfg.ConformanceTools {
		conformance.Register(srv, conformance.Options{Retry: s.cfg.SSERetry})
		conformance.RegisterStateless(srv, conformance.StatelessOptions{Principal: principal, Sealer: m.sealer})
	}
	m.servers[principal] = srv
	return srv
}

// modernSession is the tools' view of a sessionless principal: state that
// would be per session is per principal.
type modernSession struct {
	principal string
	counter   atomic.Int64
	tallies   tools.Tallies
}

func (m *modernSession) IncrementCounter() (int64, error) {
	return m.counter.Add(1), nil
}

func (m *modernSession) Done() <-chan struct{} { return nil } // never: no session ends
func (m *modernSession) JobOwner() jobs.Owner  { return jobs.Owner{Principal: m.principal} }

// serveModern answers a request that speaks the sessionless revision.
// Mcp-Session-Id and Last-Event-ID mean nothing there and are ignored.
func (s *Server) serveModern(w http.ResponseWriter, r *http.Request, principal string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeRPCError(w, http.StatusMethodNotAllowed, CodeInvalidRequest, "Method not allowed: protocol "+modernVersion+" has no sessions or standalone streams; use POST", nil)
		return
	}
	r.Header.Del(headerSessionID)
	r.Header.Del(keyLastEventID)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, CodeInvalidRequest, "Bad Request: reading body: "+err.Error(), nil)
		return
	}
	if v := r.Header.Get(headerProtocolVersion); v != modernVersion {
		s.refuseRevision(w, v, body)
		return
	}
	w = unbuffered{w}
	// The id guard and the envelope check hold here too (see servePOST);
	// what does not parse the go-sdk refuses in its own words.
	_, rpcID, batch, _, perr := peek(body)
	if errors.Is(perr, errAmbiguous) {
		writePeekError(w, perr)
		return
	}
	if err := checkIDs(rpcID, batch); err != nil {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		return
	}
	release, err := s.reserveSessionless(r, principal)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		var id json.RawMessage // null for a body the go-sdk would refuse
		if perr == nil {
			id = rpcID
		}
		writeRPCErrorID(w, http.StatusTooManyRequests, CodeInvalidRequest, "Too Many Requests: "+err.Error(), nil, id)
		return
	}
	defer release()
	if s.serveModernTask(w, r, principal, body) {
		return
	}
	r.Body = newBody(body)
	je := &jsonErrors{ResponseWriter: w} // the go-sdk's 415 and 400 are plain text
	je.id = rpcID
	s.modern.handler.ServeHTTP(je, r.WithContext(context.WithValue(r.Context(), modernPrincipalKey{}, principal)))
	je.finish()
}

// modernRequest is a POST body of the sessionless revision, as far as the
// tasks extension needs it.
type modernRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		TaskID    string          `json:"taskId"`
		// InputResponses answer a fixture's inputRequests (conformance tools).
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           map[string]any  `json:"_meta"`
		Task           *struct {
			TTLMs *int64 `json:"ttlMs"`
		} `json:"task"`
	} `json:"params"`
}

// declaresTasks reports the per-request declaration of the extension.
func (m modernRequest) declaresTasks() bool {
	caps, _ := m.Params.Meta[metaClientCaps].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[tasksExtension]
	return ok
}

// serveModernTask answers the extension's requests; it reports false for
// a body the go-sdk serves (a tools/call of a client that did not declare
// the extension is an ordinary call: no task may be returned to it).
func (s *Server) serveModernTask(w http.ResponseWriter, r *http.Request, principal string, body []byte) bool {
	var m modernRequest
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return false
	}
	switch m.Method {
	case "subscriptions/listen":
		s.serveListen(w, r, m, principal, body)
		return true
	case "tools/call":
		if !m.declaresTasks() || !slices.Contains(tools.TaskTools, m.Params.Name) && !s.fixtureTask(m) {
			return false
		}
	case "tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list":
	default:
		return false
	}
	status, result, rerr := s.answerModernTask(r, m, principal)
	if rerr != nil {
		writeRPCErrorID(w, taskStatus(w, rerr, status), rerr.Code, rerr.Message, rerr.Data, m.ID)
		return true
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", m.ID, result})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return true
}

// modernTask is the extension's flat task.
type modernTask struct {
	ResultType     string       `json:"resultType,omitempty"`
	TaskID         string       `json:"taskId"`
	Status         tasks.Status `json:"status"`
	StatusMessage  string       `json:"statusMessage,omitempty"`
	CreatedAt      string       `json:"createdAt"`
	LastUpdatedAt  string       `json:"lastUpdatedAt"`
	TTLMs          int64        `json:"ttlMs"`
	PollIntervalMs int64        `json:"pollIntervalMs,omitempty"`
	// Result or Error is the outcome, inline, once the task has one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *tasks.Error    `json:"error,omitempty"`
	// InputRequests is what an input_required task waits for.
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
}

// complete is the empty result of tasks/cancel and tasks/update (SEP-2322's
// resultType on every result that is not a task).
var complete = map[string]string{"resultType": "complete"}

func modernWire(snap tasks.Snapshot) modernTask {
	t := snap.Wire()
	out := modernTask{
		TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval,
	}
	if o := snap.Outcome; o != nil {
		out.Result, out.Error = o.Result, o.Error
		if snap.Status == tasks.Failed && o.IsError && o.Result != nil {
			// A tool that ran and reported an error completed; failed is
			// for protocol errors (SEP-2663).
			out.Status = tasks.Completed
		}
	}
	return out
}

// checkModernHeaders validates what the headers of a request the
// reference answers itself repeat of its body: the protocol version and
// the method (HeaderMismatch, -32020).
func checkModernHeaders(r *http.Request, m modernRequest) *tasks.Error {
	if v, ok := m.Params.Meta[metaVersion].(string); ok && v != modernVersion {
		return &tasks.Error{Code: CodeHeaderMismatch, Message: fmt.Sprintf("_meta %s %q does not match the %s header %q", metaVersion, v, headerProtocolVersion, modernVersion)}
	}
	if got := r.Header.Get(headerMcpMethod); got != m.Method {
		return &tasks.Error{Code: CodeHeaderMismatch, Message: fmt.Sprintf("%s header %q does not match the method %q", headerMcpMethod, got, m.Method)}
	}
	return nil
}

func (s *Server) answerModernTask(r *http.Request, m modernRequest, principal string) (int, any, *tasks.Error) {
	if rerr := checkModernHeaders(r, m); rerr != nil {
		return http.StatusBadRequest, nil, rerr
	}
	switch m.Method {
	case "tasks/result", "tasks/list":
		return http.StatusNotFound, nil, &tasks.Error{Code: CodeMethodNotFound, Message: m.Method + " does not exist in the " + tasksExtension + " extension: tasks/get carries the result"}
	case "tools/call":
		if name := r.Header.Get(headerMcpName); name != m.Params.Name {
			return http.StatusBadRequest, nil, &tasks.Error{Code: CodeHeaderMismatch, Message: fmt.Sprintf("%s header %q does not match params.name %q", headerMcpName, name, m.Params.Name)}
		}
		return s.createModernTask(m, principal)
	}
	if !m.declaresTasks() {
		return http.StatusBadRequest, nil, &tasks.Error{Code: CodeMissingCapability, Message: m.Method + " needs the " + tasksExtension + " extension declared in _meta " + metaClientCaps + ".extensions",
			Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}}}
	}
	if name := r.Header.Get(headerMcpName); name != m.Params.TaskID {
		return http.StatusBadRequest, nil, &tasks.Error{Code: CodeHeaderMismatch, Message: fmt.Sprintf("%s header %q does not match params.taskId %q", headerMcpName, name, m.Params.TaskID)}
	}
	switch m.Method {
	case "tasks/get":
		snap, err := s.tasks.Get(principal, m.Params.TaskID)
		if err != nil {
			return http.StatusOK, nil, taskError(err)
		}
		t := modernWire(snap)
		t.ResultType = "complete"
		if in := s.modern.taskInputOf(snap.ID); in != nil && snap.Status == tasks.Working {
			if asks := in.requests(); len(asks) > 0 {
				t.Status, t.InputRequests = tasks.InputRequired, asks
			}
		}
		return http.StatusOK, t, nil
	case "tasks/cancel":
		// Idempotent: cancelling a finished or cancelled task is acknowledged.
		if _, err := s.tasks.Cancel(principal, m.Params.TaskID); err != nil && !errors.Is(err, tasks.ErrTerminal) {
			return http.StatusOK, nil, taskError(err)
		}
		return http.StatusOK, complete, nil
	default: // tasks/update
		snap, err := s.tasks.Get(principal, m.Params.TaskID)
		if err != nil {
			return http.StatusOK, nil, taskError(err)
		}
		if in := s.modern.taskInputOf(snap.ID); in != nil && snap.Status == tasks.Working && len(in.requests()) > 0 {
			if rerr := in.answer(m.Params.InputResponses); rerr != nil {
				return http.StatusOK, nil, rerr
			}
			return http.StatusOK, complete, nil
		}
		return http.StatusOK, nil, invalidParams("task %s is %s, not waiting for input", snap.ID, snap.Status)
	}
}

// createModernTask starts a task-returning tools/call.
func (s *Server) createModernTask(m modernRequest, principal string) (int, any, *tasks.Error) {
	var ttlMs *int64
	if m.Params.Task != nil {
		ttlMs = m.Params.Task.TTLMs
	}
	var snap tasks.Snapshot
	var rerr *tasks.Error
	if s.fixtureTask(m) {
		snap, rerr = s.startFixtureTask(m, principal, ttlMs)
	} else {
		snap, rerr = s.startTask(jobs.Owner{Principal: principal}, m.Params.Name, m.Params.Arguments, ttlMs)
	}
	if rerr != nil {
		return http.StatusOK, nil, rerr
	}
	t := modernWire(snap)
	t.ResultType = "task"
	return http.StatusOK, t, nil
}
