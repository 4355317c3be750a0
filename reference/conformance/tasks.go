package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663)
// call fixtures of their own. A client that declared the extension gets a
// task for the task-supporting ones (the server runs TaskWork); one that
// did not gets the ordinary call below, or -32021 from a tool that only
// runs as a task.

// TasksExtension is the extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// maxComputeSeconds bounds slow_compute's sleep.
const maxComputeSeconds = 600

// TaskSupport is a fixture's execution.taskSupport: "required",
// "optional", or "" for a tool that is not one of them or never runs as
// a task.
func TaskSupport(name string) string {
	switch name {
	case "failing_job", "test_tool_with_task":
		return "required"
	case "slow_compute", "protocol_error_job", "confirm_delete", "multi_input":
		return "optional"
	}
	return ""
}

// Asker asks the client for input while a task waits (the task's status
// is input_required meanwhile) and returns the answers.
type Asker func(ctx context.Context, asks mcp.InputRequestMap) (mcp.InputResponseMap, error)

// TaskWork validates a task fixture's arguments and returns its work: the
// tool's result, or an error that fails the task as a protocol error.
// responses are the inputResponses of the call that created the task.
func TaskWork(name string, args json.RawMessage, responses mcp.InputResponseMap, ask Asker) (func(context.Context) (*mcp.CallToolResult, error), error) {
	switch name {
	case "slow_compute":
		a, err := computeArgs(args)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*mcp.CallToolResult, error) { return compute(ctx, a) }, nil
	case "failing_job":
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("failing_job failed, as it always does")}}, nil
		}, nil
	case "protocol_error_job":
		return func(context.Context) (*mcp.CallToolResult, error) { return nil, errProtocol }, nil
	case "confirm_delete":
		var a struct {
			Filename string `json:"filename"`
		}
		if err := decode(args, &a); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			got, err := ask(ctx, mcp.InputRequestMap{"confirm": confirmDelete(a.Filename)})
			if err != nil {
				return nil, err
			}
			return deleted(a.Filename, got["confirm"]), nil
		}, nil
	case "multi_input":
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			got, err := ask(ctx, multiAsks)
			if err != nil {
				return nil, err
			}
			return done("Got %d answers", len(got)), nil
		}, nil
	case "test_tool_with_task":
		name, err := elicited(responses["user_name"], "name")
		if err != nil {
			return nil, err
		}
		return func(context.Context) (*mcp.CallToolResult, error) { return done("Hello from the task, %s!", name), nil }, nil
	}
	return nil, fmt.Errorf("tool %q does not run as a task", name)
}

var errProtocol = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job failed with a protocol error, as it always does"}

func confirmDelete(file string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: fmt.Sprintf("Delete %s?", file),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)}
}

var multiAsks = mcp.InputRequestMap{
	"first":  &mcp.ElicitParams{Message: "First: your name?", RequestedSchema: stringField("name")},
	"second": &mcp.ElicitParams{Message: "Second: your name again?", RequestedSchema: stringField("name")},
}

func deleted(file string, resp mcp.InputResponse) *mcp.CallToolResult {
	if er, ok := resp.(*mcp.ElicitResult); ok && er.Action == "accept" {
		return done("Deleted %s", file)
	}
	return done("Kept %s", file)
}

type slowCompute struct {
	Seconds float64 `json:"seconds"`
	Label   string  `json:"label"`
}

func computeArgs(args json.RawMessage) (slowCompute, error) {
	var a slowCompute
	if err := decode(args, &a); err != nil {
		return a, err
	}
	if a.Seconds < 0 || a.Seconds > maxComputeSeconds {
		return a, fmt.Errorf("seconds %v is out of [0, %d]", a.Seconds, maxComputeSeconds)
	}
	return a, nil
}

func compute(ctx context.Context, a slowCompute) (*mcp.CallToolResult, error) {
	if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return done("Computed %s after %vs", a.Label, a.Seconds), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func decode(args json.RawMessage, v any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// needsTasks is -32021 for a task-only tool called without the extension.
func needsTasks(name string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: name + " runs only as a task: declare the " + TasksExtension + " extension", Data: data}
}

func registerTaskFixtures(srv *mcp.Server) {
	add := func(name, about string, schema json.RawMessage, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: about, InputSchema: schema}, h)
	}
	add("greet", "Returns Hello, {name}! (never a task).", oneString("name", "who to greet"),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Name string }
			if err := unmarshalArgs(req, &a); err != nil {
				return nil, err
			}
			return done("Hello, %s!", a.Name), nil
		})
	add("slow_compute", "Sleeps seconds, then returns a result naming label; a task for a client with the tasks extension.",
		json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := computeArgs(req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			return compute(ctx, a)
		})
	for _, name := range []string{"failing_job", "test_tool_with_task"} {
		about := map[string]string{
			"failing_job":         "Runs only as a task; ends with a tool error after about a second.",
			"test_tool_with_task": "Runs only as a task: asks for user_name (an InputRequiredResult), then creates a task whose result greets them.",
		}[name]
		add(name, about, noArgs, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, ok := req.ClientCapabilities().Extensions[TasksExtension]; !ok {
				return nil, needsTasks(req.Params.Name)
			}
			// With the extension, the call that answers arrives as a task.
			return ask(req, mcp.InputRequestMap{"user_name": askName}, func(mcp.InputResponseMap) (*mcp.CallToolResult, error) {
				return nil, errors.New("test_tool_with_task: the answered call should have become a task")
			})
		})
	}
	add("protocol_error_job", "Fails with a protocol error (a failed task).", noArgs,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, errProtocol })
	add("confirm_delete", "Asks to confirm deleting filename (elicitation), then reports what it did.", oneString("filename", "the file to delete"),
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Filename string }
			if err := unmarshalArgs(req, &a); err != nil {
				return nil, err
			}
			return ask(req, mcp.InputRequestMap{"confirm": confirmDelete(a.Filename)}, func(got mcp.InputResponseMap) (*mcp.CallToolResult, error) {
				return deleted(a.Filename, got["confirm"]), nil
			})
		})
	add("multi_input", "Asks two questions at once (elicitation), then completes.", noArgs,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return ask(req, multiAsks, func(got mcp.InputResponseMap) (*mcp.CallToolResult, error) {
				return done("Got %d answers", len(got)), nil
			})
		})
}
