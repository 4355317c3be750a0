package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/store"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
	"github.com/mcp-conform/mcp-conform/reference/tools"
)

// CodeInvalidParams answers a task request about an unknown task.
const CodeInvalidParams = -32602

// tasksVersion is the first protocol revision with tasks.
const tasksVersion = "2025-11-25"

// taskMark starts every tasks/* method and the "task" key, unescaped.
var taskMark = []byte(`"task`)

// taskMessage is a POST body the server answers itself: the go-sdk knows
// no tasks, so task requests and task-augmented tool calls never reach it.
type taskMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// taskRequest reports whether body is a single request about tasks: a
// tasks/* method, or a tools/call with params.task.
func taskRequest(body []byte) (taskMessage, bool) {
	if !bytes.Contains(body, taskMark) && bytes.IndexByte(body, '\\') < 0 {
		// Neither a "tasks/..." method nor a "task" key, and no escape that
		// could spell one: most POSTs, answered without decoding.
		return taskMessage{}, false
	}
	var m taskMessage
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" {
		return m, false
	}
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return m, true
	case "tools/call":
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		return m, json.Unmarshal(m.Params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
	}
	return m, false
}

// serveTask answers m, a task request of sess's principal (see
// taskRequest). A task is the principal's (anonymous requestors share ""
// and hold the unguessable id), never the session's: another session of
// the same principal reaches it.
func (s *Server) serveTask(ctx context.Context, w http.ResponseWriter, sess *session, m taskMessage) {
	owner := sess.principal
	var result json.RawMessage
	var rerr *tasks.Error
	if m.Method == "tasks/result" {
		// A wait holds a goroutine and a connection as long as the task
		// runs: counted with the session's tool calls.
		if err := s.reserveCall(sess); err != nil {
			writeRPCErrorID(w, http.StatusOK, CodeInternalError, err.Error(), nil, m.ID)
			return
		}
		defer sess.calls.Add(-1)
		wait, stop := sessionWait(ctx, sess)
		result, rerr = s.answerTask(wait, m, owner, sess.id)
		stop()
		if rerr != nil && ctx.Err() == nil && sess.ctx.Err() != nil {
			s.writeWaitEnded(w, sess, m)
			return
		}
	} else {
		result, rerr = s.answerTask(ctx, m, owner, sess.id)
	}
	if rerr != nil {
		writeRPCErrorID(w, taskStatus(w, rerr, http.StatusOK), rerr.Code, rerr.Message, rerr.Data, m.ID)
		return
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", m.ID, result})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func invalidParams(format string, a ...any) *tasks.Error {
	return &tasks.Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// storeDownData is the data of a task request's error when the shared
// store is out of reach; such an error is answered 503 (see serveTask).
type storeDownData struct {
	Reason string `json:"reason"`
}

// taskStatus is the HTTP status of a task request's error: 503 with
// Retry-After when the store is out of reach, else status.
func taskStatus(w http.ResponseWriter, rerr *tasks.Error, status int) int {
	if _, ok := rerr.Data.(storeDownData); ok {
		w.Header().Set("Retry-After", retryAfter)
		return http.StatusServiceUnavailable
	}
	return status
}

// taskError maps the store's errors to JSON-RPC: every refusal about a
// task id is invalid params (-32602), as the spec says; a store out of
// reach is an internal error, answered 503.
func taskError(err error) *tasks.Error {
	if unavailable(err) {
		return &tasks.Error{Code: CodeInternalError, Message: "Service Unavailable: " + err.Error() + "; retry shortly", Data: storeDownData{"store_unavailable"}}
	}
	if errors.Is(err, tasks.ErrFull) {
		return &tasks.Error{Code: CodeInternalError, Message: err.Error()}
	}
	return invalidParams("%v", err)
}

func (s *Server) answerTask(ctx context.Context, m taskMessage, owner, sessionID string) (json.RawMessage, *tasks.Error) {
	var p struct {
		TaskID string `json:"taskId"`
		Cursor string `json:"cursor"`
	}
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &p) != nil {
		return nil, invalidParams("params must be an object")
	}
	wire := func(snap tasks.Snapshot, err error) (json.RawMessage, *tasks.Error) {
		if err != nil {
			return nil, taskError(err)
		}
		b, _ := json.Marshal(snap.Wire())
		return b, nil
	}
	switch m.Method {
	case "tools/call":
		return s.createTask(m.Params, owner, sessionID)
	case "tasks/get":
		return wire(s.tasks.Get(owner, p.TaskID))
	case "tasks/cancel":
		return wire(s.tasks.Cancel(owner, p.TaskID))
	case "tasks/list":
		if !s.tasksListed() {
			return nil, &tasks.Error{Code: CodeMethodNotFound, Message: "tasks/list needs an authorization context (run with bearer tokens)"}
		}
		page, next, err := s.tasks.List(owner, p.Cursor)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		out := struct {
			Tasks      []tasks.Task `json:"tasks"`
			NextCursor string       `json:"nextCursor,omitempty"`
		}{Tasks: []tasks.Task{}, NextCursor: next}
		for _, t := range page {
			out.Tasks = append(out.Tasks, t.Wire())
		}
		b, _ := json.Marshal(out)
		return b, nil
	case "tasks/result":
		// Blocks until the task is terminal; a dropped connection ends the
		// wait, never the task.
		snap, err := s.tasks.Result(ctx, owner, p.TaskID)
		if err != nil {
			return nil, taskError(err)
		}
		if snap.Outcome == nil { // cancelled
			return nil, &tasks.Error{Code: CodeInvalidRequest, Message: "task was cancelled", Data: map[string]any{"taskId": snap.ID, "status": snap.Status}}
		}
		if snap.Outcome.Error != nil {
			return nil, snap.Outcome.Error
		}
		res, err := tasks.WithRelatedTask(snap.Outcome.Result, snap.ID)
		if err != nil {
			return nil, &tasks.Error{Code: CodeInternalError, Message: err.Error()}
		}
		return res, nil
	}
	return nil, &tasks.Error{Code: CodeMethodNotFound, Message: "method not found: " + m.Method}
}

// tasksListed: only a server that can tell requestors apart lists tasks.
func (s *Server) tasksListed() bool { return len(s.cfg.BearerTokens) > 0 }

// createTask starts a task-augmented tools/call. The task is in the store
// before the CreateTaskResult is written (durable creation).
func (s *Server) createTask(params json.RawMessage, owner, sessionID string) (json.RawMessage, *tasks.Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalidParams("params: %v", err)
	}
	if !slices.Contains(tools.TaskTools, p.Name) {
		return nil, &tasks.Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("tool %q does not support tasks (execution.taskSupport is forbidden)", p.Name)}
	}
	snap, rerr := s.startTask(jobs.Owner{Principal: owner, Session: sessionID}, p.Name, p.Arguments, p.Task.TTL)
	if rerr != nil {
		return nil, rerr
	}
	b, _ := json.Marshal(map[string]any{"task": snap.Wire()})
	return b, nil
}

// startTask validates a task tool's arguments and creates its task for
// owner.Principal, counted against owner's limits like a job;
// ttlMs nil means the default. The task is in the store
// when it returns, before any answer is written (durable creation).
func (s *Server) startTask(owner jobs.Owner, name string, args json.RawMessage, ttlMs *int64) (tasks.Snapshot, *tasks.Error) {
	work, err := tools.TaskWork(tools.TaskDeps{Jobs: s.jobs, Clock: s.cfg.Clock, Owner: owner}, name, args)
	if err != nil {
		return tasks.Snapshot{}, invalidParams("%v", err)
	}
	var ttl *time.Duration
	if ttlMs != nil {
		d := time.Duration(*ttlMs) * time.Millisecond
		ttl = &d
	}
	// The work waits until the task's session is recorded, so that even an
	// instant status change finds where to send notifications/tasks/status.
	recorded := make(chan struct{})
	snap, err := s.tasks.Create(owner.Principal, owner.Key(), ttl, func(ctx context.Context) tasks.Outcome {
		<-recorded
		res := work(ctx)
		b, err := json.Marshal(res)
		if err != nil {
			return tasks.Outcome{Error: &tasks.Error{Code: CodeInternalError, Message: err.Error()}}
		}
		return tasks.Outcome{Result: b, IsError: res.IsError}
	})
	if err == nil && owner.Session != "" {
		s.taskOrigin.Store(snap.ID, owner.Session)
	}
	close(recorded)
	if err != nil {
		return tasks.Snapshot{}, taskError(err)
	}
	s.log.Info("task created", "task", snap.ID, "tool", name, "principal", owner.Principal)
	return snap, nil
}

// taskSupport is a tool's execution member in tools/list.
type taskSupport struct {
	TaskSupport string `json:"taskSupport"`
}

// taskTool is a tool as listed with its execution member; the go-sdk's
// Tool has none.
type taskTool struct {
	*mcp.Tool
	Execution *taskSupport `json:"execution,omitempty"`
}

// taskToolsResult is tools/list's result with task support marked; its
// tools field shadows the embedded one.
type taskToolsResult struct {
	*mcp.ListToolsResult
	Tools []taskTool `json:"tools"`
}

// taskInitResult is the InitializeResult with the tasks capability.
type taskInitResult struct {
	*mcp.InitializeResult
	Capabilities taskCapabilities `json:"capabilities"`
}

type taskCapabilities struct {
	*mcp.ServerCapabilities
	Tasks map[string]any `json:"tasks,omitempty"`
}

// taskCaps and taskCapsListed are the tasks capability an InitializeResult
// announces, without and with tasks/list; built once, never changed (every
// initialize marshals one).
var taskCaps, taskCapsListed = taskCapability(false), taskCapability(true)

func taskCapability(listed bool) map[string]any {
	caps := map[string]any{
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
	if listed {
		caps["list"] = map[string]any{}
	}
	return caps
}

// announceTasks declares the tasks capability at initialize (from
// 2025-11-25) and each tool's task support in tools/list.
func (s *Server) announceTasks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		return s.announce(res), nil
	}
}

// announce is announceTasks on a result.
func (s *Server) announce(res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.InitializeResult:
		if !revisionAtLeast(r.ProtocolVersion, tasksVersion) || r.Capabilities == nil {
			return res
		}
		caps := taskCaps
		if s.tasksListed() {
			caps = taskCapsListed
		}
		return &taskInitResult{InitializeResult: r, Capabilities: taskCapabilities{ServerCapabilities: r.Capabilities, Tasks: caps}}
	case *mcp.ListToolsResult:
		out := &taskToolsResult{ListToolsResult: r, Tools: make([]taskTool, len(r.Tools))}
		for i, t := range r.Tools {
			out.Tools[i] = taskTool{Tool: t}
			if slices.Contains(tools.TaskTools, t.Name) {
				out.Tools[i].Execution = &taskSupport{TaskSupport: "optional"}
			}
		}
		return out
	}
	return res
}

// sharedTasks is where tasks live for every replica: the store's, on a
// shared store; nil keeps them in this process.
func sharedTasks(st store.Store) tasks.Shared {
	if st == nil || !st.Shared() {
		return nil
	}
	return st.Tasks()
}
