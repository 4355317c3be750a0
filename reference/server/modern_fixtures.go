package server

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/conformance"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// The tasks extension's conformance fixtures (--conformance-tools) run as
// tasks of the reference's store. Some wait for the client's input: the
// task is input_required with its inputRequests on tasks/get until
// tasks/update has answered every one of them.

// fixtureTask reports a tools/call the conformance fixtures run as a task.
// test_tool_with_task first asks for input in an ordinary call
// (InputRequiredResult) and becomes a task only on the call that answers.
func (s *Server) fixtureTask(m modernRequest) bool {
	if !s.cfg.ConformanceTools || conformance.TaskSupport(m.Params.Name) == "" {
		return false
	}
	return m.Params.Name != "test_tool_with_task" || len(m.Params.InputResponses) > 0
}

// taskInput is what a fixture task waits for from its client.
type taskInput struct {
	mu      sync.Mutex
	pending mcp.InputRequestMap
	got     mcp.InputResponseMap
	changed chan struct{} // closed, and replaced, at each answer
}

func newTaskInput() *taskInput { return &taskInput{changed: make(chan struct{})} }

// ask waits until every request of asks is answered, or ctx ends (the
// task was cancelled).
func (in *taskInput) ask(ctx context.Context, asks mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	in.mu.Lock()
	in.pending, in.got = maps.Clone(asks), mcp.InputResponseMap{}
	in.mu.Unlock()
	for {
		in.mu.Lock()
		if len(in.pending) == 0 {
			got := in.got
			in.got = nil
			in.mu.Unlock()
			return got, nil
		}
		ch := in.changed
		in.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// requests is what the task waits for now.
func (in *taskInput) requests() mcp.InputRequestMap {
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(in.pending)
}

// answer records the responses to pending requests; a response to a
// request the task did not make is ignored. It fails on a response it
// cannot read.
func (in *taskInput) answer(raw json.RawMessage) *tasks.Error {
	var all map[string]json.RawMessage
	if len(raw) > 0 && json.Unmarshal(raw, &all) != nil {
		return invalidParams("inputResponses: not an object")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	known := map[string]json.RawMessage{}
	for k, v := range all {
		if _, ok := in.pending[k]; ok {
			known[k] = v
		}
	}
	b, _ := json.Marshal(known)
	var got mcp.InputResponseMap
	if err := json.Unmarshal(b, &got); err != nil {
		return invalidParams("inputResponses: %v", err)
	}
	for k, v := range got {
		delete(in.pending, k)
		in.got[k] = v
	}
	close(in.changed)
	in.changed = make(chan struct{})
	return nil
}

// startFixtureTask creates the task of a conformance fixture.
func (s *Server) startFixtureTask(m modernRequest, principal string, ttlMs *int64) (tasks.Snapshot, *tasks.Error) {
	var responses mcp.InputResponseMap
	if len(m.Params.InputResponses) > 0 {
		if err := json.Unmarshal(m.Params.InputResponses, &responses); err != nil {
			return tasks.Snapshot{}, invalidParams("inputResponses: %v", err)
		}
	}
	in := newTaskInput()
	work, err := conformance.TaskWork(m.Params.Name, m.Params.Arguments, responses, in.ask)
	if err != nil {
		return tasks.Snapshot{}, invalidParams("%v", err)
	}
	recorded := make(chan struct{}) // the work's input is findable first
	var id string
	var ttl *time.Duration
	if ttlMs != nil {
		d := time.Duration(*ttlMs) * time.Millisecond
		ttl = &d
	}
	snap, err := s.tasks.Create(principal, jobs.Owner{Principal: principal}.Key(), ttl, func(ctx context.Context) tasks.Outcome {
		<-recorded
		defer s.modern.inputs.Delete(id)
		res, err := work(ctx)
		if err != nil {
			code := CodeInternalError
			if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
				code = int(je.Code)
			}
			return tasks.Outcome{Error: &tasks.Error{Code: code, Message: err.Error()}}
		}
		b, err := json.Marshal(res)
		if err != nil {
			return tasks.Outcome{Error: &tasks.Error{Code: CodeInternalError, Message: err.Error()}}
		}
		return tasks.Outcome{Result: b, IsError: res.IsError}
	})
	if err == nil {
		id = snap.ID
		s.modern.inputs.Store(id, in)
	}
	close(recorded)
	if err != nil {
		return tasks.Snapshot{}, taskError(err)
	}
	s.log.Info("task created", "task", snap.ID, "tool", m.Params.Name, "principal", principal)
	return snap, nil
}

// taskInputOf is the pending input of task id, if it is a fixture's.
func (m *modern) taskInputOf(id string) *taskInput {
	in, _ := m.inputs.Load(id)
	ti, _ := in.(*taskInput)
	return ti
}
