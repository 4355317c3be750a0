package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// KeyTask is the task a tool call runs as (JSON TaskRecord), from the
// moment its id arrives until its result does. It is not a session key: a
// task belongs to the principal and outlives the session.
const KeyTask = "mcp_task"

// defaultTaskPoll is the poll interval when a task suggests none.
const defaultTaskPoll = time.Second

// TaskRecord is a stored task: enough to poll it after a restart.
type TaskRecord struct {
	TaskID    string          `json:"task_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Status    string          `json:"status"`
	// PollMS is the server's pollInterval in milliseconds (0: none).
	PollMS  int64     `json:"poll_ms,omitempty"`
	Created time.Time `json:"created"`
}

// TaskEvent is a task's status as the client learns it: on creation, and
// on every change it sees while polling.
type TaskEvent struct {
	TaskID        string
	Status        string
	StatusMessage string
}

// ErrNoTask is returned by ResumeTask when no task is stored.
var ErrNoTask = errors.New("no task stored to resume")

// TaskLostError: the server no longer knows the stored task (its ttl
// passed, or it restarted without a durable store); it is forgotten.
type TaskLostError struct {
	TaskID string
	Cause  error
}

func (e *TaskLostError) Error() string {
	return fmt.Sprintf("task %s is gone, forgotten: %v", e.TaskID, e.Cause)
}
func (e *TaskLostError) Unwrap() error { return e.Cause }

// task is a task as tasks/get and CreateTaskResult carry it (2025-11-25).
type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  int64  `json:"pollInterval"`
}

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// StoredTask returns the stored task, if any.
func (c *Client) StoredTask() (TaskRecord, bool) {
	var rec TaskRecord
	c.st.getJSON(KeyTask, &rec)
	return rec, rec.TaskID != ""
}

// CallToolTask runs a tool as a task (tools/call with params.task): the
// task id is stored before anything else happens, then the task is polled
// at its pollInterval until it ends, and its result fetched. A task stored
// for the same tool and arguments is polled instead of creating another.
func (c *Client) CallToolTask(ctx context.Context, name string, args json.RawMessage) (*ToolResult, error) {
	args = objectArgs(args)
	if rec, ok := c.StoredTask(); ok && rec.Tool == name && bytes.Equal(rec.Arguments, args) {
		c.log.Info("a task for this call is stored; polling it instead of creating another", "task", rec.TaskID)
		return c.pollTask(ctx, rec)
	}
	created, err := c.createTask(ctx, name, args)
	if err != nil {
		return nil, err
	}
	return c.adoptTask(ctx, name, args, created)
}

// adoptTask stores a created task before anything else, then polls it.
func (c *Client) adoptTask(ctx context.Context, name string, args json.RawMessage, created task) (*ToolResult, error) {
	rec := TaskRecord{TaskID: created.TaskID, Tool: name, Arguments: args, Status: created.Status,
		PollMS: created.PollInterval, Created: c.clk.Now()}
	if err := c.st.setJSON(KeyTask, rec); err != nil {
		return nil, persistErr("task", err)
	}
	c.taskEvent(TaskEvent{TaskID: rec.TaskID, Status: rec.Status, StatusMessage: created.StatusMessage})
	return c.pollTask(ctx, rec)
}

// createTask sends the task-augmented tools/call of the client's revision.
func (c *Client) createTask(ctx context.Context, name string, args json.RawMessage) (task, error) {
	if c.modern() {
		return c.createTaskModern(ctx, name, args)
	}
	raw, err := c.Request(ctx, "tools/call", map[string]any{"name": name, "arguments": args, "task": map[string]any{}})
	if err != nil {
		return task{}, err
	}
	var created struct {
		Task *task `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Task == nil || created.Task.TaskID == "" {
		return task{}, fmt.Errorf("tools/call with params.task answered %s, not a CreateTaskResult", raw)
	}
	return *created.Task, nil
}

// getTask polls the task once; under the sessionless revision the answer
// carries the outcome inline (out), which has no tasks/result.
func (c *Client) getTask(ctx context.Context, id string) (t task, out *modernTask, err error) {
	var raw json.RawMessage
	if c.modern() {
		raw, err = c.modernRequest(ctx, "tasks/get", map[string]any{"taskId": id})
	} else {
		raw, err = c.Request(ctx, "tasks/get", map[string]any{"taskId": id})
	}
	if err != nil {
		return task{}, nil, err
	}
	if c.modern() {
		var mt modernTask
		if err := json.Unmarshal(raw, &mt); err != nil {
			return task{}, nil, fmt.Errorf("tasks/get answered %.300s: %w", raw, err)
		}
		return task{TaskID: mt.TaskID, Status: mt.Status, StatusMessage: mt.StatusMessage, PollInterval: mt.PollIntervalMs}, &mt, nil
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return task{}, nil, fmt.Errorf("tasks/get answered %.300s: %w", raw, err)
	}
	return t, nil, nil
}

// ResumeTask polls the stored task to its result: what a restarted client
// does, in whatever session it has now.
func (c *Client) ResumeTask(ctx context.Context) (*ToolResult, error) {
	rec, ok := c.StoredTask()
	if !ok {
		return nil, ErrNoTask
	}
	return c.pollTask(ctx, rec)
}

func (c *Client) pollTask(ctx context.Context, rec TaskRecord) (*ToolResult, error) {
	var inline *modernTask
	for first := true; ; first = false {
		if !first && !c.sleep(ctx, rec.poll()) {
			return nil, ctxError(ctx, "task")
		}
		t, got, err := c.getTask(ctx, rec.TaskID)
		if err != nil {
			return nil, c.taskFailed(rec, err)
		}
		inline = got
		if t.PollInterval > 0 {
			rec.PollMS = t.PollInterval
		}
		if t.Status != rec.Status {
			rec.Status = t.Status
			if err := c.st.setJSON(KeyTask, rec); err != nil {
				return nil, persistErr("task", err)
			}
			c.taskEvent(TaskEvent{TaskID: rec.TaskID, Status: t.Status, StatusMessage: t.StatusMessage})
		}
		if terminal(t.Status) {
			break
		}
	}
	if rec.Status == "cancelled" {
		return nil, c.forgetTask(rec, fmt.Errorf("task %s was cancelled", rec.TaskID))
	}
	var raw json.RawMessage
	switch {
	case inline != nil && inline.Error != nil:
		return nil, c.forgetTask(rec, fmt.Errorf("task %s failed: %w", rec.TaskID, inline.Error))
	case inline != nil && len(inline.Result) == 0:
		return nil, c.forgetTask(rec, fmt.Errorf("task %s is %s but tasks/get carried neither result nor error", rec.TaskID, rec.Status))
	case inline != nil:
		raw = inline.Result
	default:
		var err error
		if raw, err = c.Request(ctx, "tasks/result", map[string]any{"taskId": rec.TaskID}); err != nil {
			return nil, c.taskFailed(rec, err)
		}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decoding the task's result: %w", err)
	}
	out := &ToolResult{RequestID: rec.TaskID, Tool: rec.Tool, Raw: raw, Result: &res}
	if err := c.st.setJSON(KeyLastResult, LastResult{Tool: rec.Tool, RequestID: rec.TaskID, Result: raw, At: c.clk.Now()}); err != nil {
		return out, persistErr("last result", err)
	}
	return out, c.forgetTask(rec, nil)
}

// poll is how long to wait between two tasks/get.
func (rec TaskRecord) poll() time.Duration {
	if rec.PollMS > 0 {
		return time.Duration(rec.PollMS) * time.Millisecond
	}
	return defaultTaskPoll
}

// taskFailed forgets the task if the server no longer knows it (-32602);
// any other error leaves it stored for the next --resume.
func (c *Client) taskFailed(rec TaskRecord, err error) error {
	var rpc *RPCError
	switch {
	case errors.As(err, &rpc) && rpc.Code == -32602:
		return c.forgetTask(rec, &TaskLostError{TaskID: rec.TaskID, Cause: err})
	case errors.As(err, &rpc) && rpc.Code == CodeMissingCapability:
		return fmt.Errorf("the server does not see the %s extension declared (task %s stays stored): %w", wire.TasksExtension, rec.TaskID, err)
	}
	return err
}

// forgetTask removes the stored task; it returns cause, or the storage error.
func (c *Client) forgetTask(rec TaskRecord, cause error) error {
	if err := c.st.removeAll([]string{KeyTask}); err != nil {
		return errors.Join(cause, persistErr("task", err))
	}
	c.log.Info("task done", "task", rec.TaskID, "status", rec.Status)
	return cause
}

func (c *Client) taskEvent(ev TaskEvent) {
	if c.opts.OnTask != nil {
		c.opts.OnTask(ev)
	}
}
