package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/reference/jobs"
)

// TaskTools are the tools a client may run as a task (their
// execution.taskSupport is "optional"); the others forbid it.
var TaskTools = []string{"long_operation", "job_start"}

// TaskDeps is what a tool run as a task needs: no session, since a task
// outlives the session it was created in.
type TaskDeps struct {
	Jobs  *jobs.Store
	Clock clock.Clock
	// Owner is who job_start's job belongs to.
	Owner jobs.Owner
}

// TaskWork validates a task tool's arguments and returns its work, which
// returns the result tools/call would have returned. Bad arguments are an
// error before any task exists.
func TaskWork(d TaskDeps, name string, arguments json.RawMessage) (func(ctx context.Context) *mcp.CallToolResult, error) {
	if len(arguments) == 0 || string(arguments) == "null" {
		arguments = json.RawMessage("{}")
	}
	switch name {
	case "long_operation":
		var a LongOperationArgs
		if err := json.Unmarshal(arguments, &a); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		interval, err := checkSteps(a.Steps, a.IntervalMS)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) *mcp.CallToolResult {
			p := pacer{clock: d.Clock, interval: interval}
			defer p.stop()
			for range a.Steps {
				if err := p.wait(ctx, nil); err != nil {
					return failed(err)
				}
			}
			return text(fmt.Sprintf("completed %d steps", a.Steps))
		}, nil
	case "job_start":
		var a JobStartArgs
		if err := json.Unmarshal(arguments, &a); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		interval, err := checkSteps(a.Steps, a.IntervalMS)
		if err != nil {
			return nil, err
		}
		return func(context.Context) *mcp.CallToolResult {
			snap, err := d.Jobs.Start(d.Owner, a.Steps, interval, a.ResumeToken)
			if err != nil {
				return failed(err)
			}
			out := JobStartResult{JobID: snap.JobID}
			b, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: out}
		}, nil
	}
	return nil, fmt.Errorf("tool %q does not run as a task", name)
}

// failed is the result of a tool that returned an error, as the go-sdk
// reports it: isError with the message.
func failed(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}
