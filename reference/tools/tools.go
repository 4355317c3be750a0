// Package tools registers the reference server's tools. Their names and
// arguments are a contract: the harness's built-in target profile and users'
// scripts call them.
package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/reference/jobs"
)

// Limits on long_operation and job_start, so a bad argument cannot pin a
// goroutine for days.
const (
	MaxSteps    = 10000
	MaxInterval = time.Minute
	// MaxDuration bounds steps × interval of one call.
	MaxDuration = time.Hour
)

// Session is the per-session application state the tools use.
type Session interface {
	// IncrementCounter fails when the session's store is out of reach.
	IncrementCounter() (int64, error)
	// Done is closed when the session ends (expired or deleted); running
	// tools stop then, as nobody can receive their results.
	Done() <-chan struct{}
	// JobOwner is the principal and session that jobs started here belong to.
	JobOwner() jobs.Owner
}

// Deps is what the tools need from their server.
type Deps struct {
	// Session finds the session a call runs in from its context; nil
	// means none, and the call fails.
	Session func(context.Context) Session
	Jobs    *jobs.Store
	Clock   clock.Clock
	// Logger gets notifications the tools could not send.
	Logger *slog.Logger
}

// Names lists the tools Register adds, in a stable order.
var Names = []string{"echo", "counter_increment", "long_operation", "job_start", "job_get"}

// EchoArgs are echo's arguments.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

// LongOperationArgs are long_operation's arguments.
type LongOperationArgs struct {
	Steps      int `json:"steps" jsonschema:"number of steps, 1 to 10000"`
	IntervalMS int `json:"interval_ms" jsonschema:"milliseconds between steps, 0 to 60000; steps × interval at most one hour"`
}

// JobStartArgs are job_start's arguments.
type JobStartArgs struct {
	Steps       int    `json:"steps" jsonschema:"number of steps, 1 to 10000"`
	IntervalMS  int    `json:"interval_ms" jsonschema:"milliseconds between steps, 0 to 60000; steps × interval at most one hour"`
	ResumeToken string `json:"resume_token,omitempty" jsonschema:"token from a completed job, to continue its conversation"`
}

// JobStartResult is job_start's structured result.
type JobStartResult struct {
	JobID string `json:"job_id"`
}

// JobGetArgs are job_get's arguments.
type JobGetArgs struct {
	JobID string `json:"job_id" jsonschema:"the id job_start returned"`
}

// Register adds every reference tool to srv.
func Register(srv *mcp.Server, d Deps) {
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Returns its text argument."},
		func(ctx context.Context, req *mcp.CallToolRequest, args EchoArgs) (*mcp.CallToolResult, any, error) {
			return text(args.Text), nil, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "counter_increment", Description: "Increments a per-session counter and returns its new value; the counter survives re-initialize and reconnect, and dies with the session."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			sess, err := d.session(ctx)
			if err != nil {
				return nil, nil, err
			}
			n, err := sess.IncrementCounter()
			if err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprint(n)), nil, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "long_operation", Description: "Runs steps at an interval, sending a progress notification (with a progress token) and a log message per step; keeps running if its stream drops."},
		func(ctx context.Context, req *mcp.CallToolRequest, args LongOperationArgs) (*mcp.CallToolResult, any, error) {
			interval, err := checkSteps(args.Steps, args.IntervalMS)
			if err != nil {
				return nil, nil, err
			}
			sess, err := d.session(ctx)
			if err != nil {
				return nil, nil, err
			}
			return longOperation(ctx, d, sess, req, args.Steps, interval)
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "job_start", Description: "Starts a background job in a conversation that outlives MCP sessions; with resume_token it continues that conversation. Returns {job_id} at once."},
		func(ctx context.Context, req *mcp.CallToolRequest, args JobStartArgs) (*mcp.CallToolResult, JobStartResult, error) {
			interval, err := checkSteps(args.Steps, args.IntervalMS)
			if err != nil {
				return nil, JobStartResult{}, err
			}
			sess, err := d.session(ctx)
			if err != nil {
				return nil, JobStartResult{}, err
			}
			snap, err := d.Jobs.Start(sess.JobOwner(), args.Steps, interval, args.ResumeToken)
			if err != nil {
				return nil, JobStartResult{}, err
			}
			return nil, JobStartResult{JobID: snap.JobID}, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "job_get", Description: "Returns a job's status and progress; when completed, its result and a resume_token."},
		func(ctx context.Context, req *mcp.CallToolRequest, args JobGetArgs) (*mcp.CallToolResult, jobs.Snapshot, error) {
			sess, err := d.session(ctx)
			if err != nil {
				return nil, jobs.Snapshot{}, err
			}
			snap, err := d.Jobs.Get(sess.JobOwner().Principal, args.JobID)
			return nil, snap, err
		})
}

// checkSteps validates the arguments before converting them: a huge
// interval_ms would overflow time.Duration and wrap into range.
func checkSteps(steps, intervalMS int) (time.Duration, error) {
	if steps < 1 || steps > MaxSteps {
		return 0, fmt.Errorf("steps must be between 1 and %d, got %d", MaxSteps, steps)
	}
	if intervalMS < 0 || int64(intervalMS) > MaxInterval.Milliseconds() {
		return 0, fmt.Errorf("interval_ms must be between 0 and %d, got %d", MaxInterval.Milliseconds(), intervalMS)
	}
	interval := time.Duration(intervalMS) * time.Millisecond
	if total := time.Duration(steps) * interval; total > MaxDuration {
		return 0, fmt.Errorf("steps × interval_ms must be at most %v, got %v", MaxDuration, total)
	}
	return interval, nil
}

// longOperation runs the steps. Only an explicit cancellation (its context)
// stops it: a dropped stream is not a cancel (DISCONNECT-NOT-CANCEL).
func longOperation(ctx context.Context, d Deps, sess Session, req *mcp.CallToolRequest, steps int, interval time.Duration) (*mcp.CallToolResult, any, error) {
	token := req.Params.GetProgressToken()
	p := pacer{clock: d.Clock, interval: interval}
	defer p.stop()
	for i := 1; i <= steps; i++ {
		if err := p.wait(ctx, sess.Done()); err != nil {
			return nil, nil, err
		}
		// The server picks the stream (the call's own, or another after a
		// cut); a notification it cannot send must not stop the operation.
		msg := fmt.Sprintf("step %d of %d", i, steps)
		if token != nil {
			d.sent(req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(steps), Message: msg,
			}))
		}
		d.sent(req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "long_operation", Data: msg}))
	}
	return text(fmt.Sprintf("completed %d steps", steps)), nil, nil
}

// session is the session of the call running with ctx.
func (d Deps) session(ctx context.Context) (Session, error) {
	if sess := d.Session(ctx); sess != nil {
		return sess, nil
	}
	return nil, errors.New("no session to run in")
}

// sent logs a notification that could not be sent.
func (d Deps) sent(err error) {
	if err != nil && d.Logger != nil {
		d.Logger.Debug("notification not delivered", "err", err)
	}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
