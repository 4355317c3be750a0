package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// The task scenario: long_operation as a task, taskSteps × taskInterval
// long; the scripted server suggests taskPoll.
const (
	taskPoll     = 300 * time.Millisecond
	taskSteps    = 5
	taskInterval = 400 * time.Millisecond
	// taskLeeway is how much sooner than taskPoll a poll may come (timer
	// and scheduling jitter).
	taskLeeway = taskPoll / 10
	// taskTakes is how long a client takes to see the task completed:
	// the task's run and one poll after it.
	taskTakes = taskSteps*taskInterval + taskPoll
)

// taskRun is the scenario's call as a task (task-call) or its resumption.
func taskRun(a contract.Action) contract.Run {
	r := contract.Run{Action: a}
	if a == contract.ActionTaskCall {
		r = callRun("long_operation", map[string]any{"steps": taskSteps, "interval_ms": taskInterval.Milliseconds()})
		r.Action = a
	}
	return r
}

// isTaskCall reports a task-augmented tools/call: params.task (2025-11-25)
// or the tasks extension declared in _meta (2026-07-28).
func (x exchange) isTaskCall() bool {
	var p struct {
		Task json.RawMessage `json:"task"`
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	if x.RPC.Method != "tools/call" || json.Unmarshal(x.RPC.Params, &p) != nil {
		return false
	}
	_, declared := p.Meta.Caps.Extensions[wire.TasksExtension]
	return declared || len(p.Task) > 0 && string(p.Task) != "null"
}

// taskID is the taskId a tasks/* request names.
func (x exchange) taskID() string {
	var p struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(x.RPC.Params, &p)
	return p.TaskID
}

// createdTask is the task id of a CreateTaskResult the server sent.
func (x exchange) createdTask() string {
	bodies := [][]byte{x.Body}
	for _, ev := range x.Events {
		bodies = append(bodies, []byte(ev.Data))
	}
	for _, b := range bodies {
		var m struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
				// 2026-07-28: the flat CreateTaskResult.
				ResultType string `json:"resultType"`
				TaskID     string `json:"taskId"`
			} `json:"result"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if m.Result.Task.TaskID != "" {
			return m.Result.Task.TaskID
		}
		if m.Result.ResultType == "task" && m.Result.TaskID != "" {
			return m.Result.TaskID
		}
	}
	return ""
}

// taskCalls are run n's task-augmented tools/call requests.
func (e *clientEnv) taskCalls(n int) []exchange {
	return slices.DeleteFunc(e.exchanges(n), func(x exchange) bool { return !x.isTaskCall() })
}

// taskGets are run n's tasks/get requests.
func (e *clientEnv) taskGets(n int) []exchange {
	return slices.DeleteFunc(e.exchanges(n), func(x exchange) bool { return x.RPC.Method != "tasks/get" })
}

// killedTask starts task-call and SIGKILLs it once the server has
// answered its task-augmented tools/call with a task and seen polls of its
// tasks/get: the fault keys on what the server saw, not on what an
// adapter prints. It returns the run and the id of the task the server
// created; a task line the run printed must name that task.
func (e *clientEnv) killedTask(ctx context.Context, polls int) (*clientRun, string) {
	e.Helper()
	a := e.start(taskRun(contract.ActionTaskCall))
	// The client holds the task id once it asks about the task.
	e.waitForDuring(ctx, a, "a tasks/ request after the task-augmented tools/call was answered with a created task", func(exchange) bool {
		xs := e.exchanges(a.n)
		i := slices.IndexFunc(xs, func(x exchange) bool { return x.isTaskCall() && x.createdTask() != "" })
		return i >= 0 && slices.ContainsFunc(xs[i+1:], func(x exchange) bool { return strings.HasPrefix(x.RPC.Method, "tasks/") })
	})
	if polls > 0 {
		e.waitForDuring(ctx, a, fmt.Sprintf("%d tasks/get", polls), func(exchange) bool { return len(e.taskGets(a.n)) >= polls })
	}
	a.kill()
	lines, _, _ := a.snapshot()
	if e.modern() {
		e.expectSessionless(a.n)
	}
	calls := e.taskCalls(a.n)
	e.expectCount(calls, 1, "run %d's task-augmented tools/call", a.n)
	id := calls[0].createdTask()
	e.Expect(id).NotTo(BeEmpty(), "the server's CreateTaskResult")
	for _, l := range lines {
		if l.Type == contract.LineTask && l.TaskID != "" {
			e.Expect(l.TaskID).To(Equal(id), "the task line names the task the server created")
		}
	}
	return a, id
}

// expectSessionless expects run n to have spoken 2026-07-28 only: every
// request a POST with that MCP-Protocol-Version, no initialize, no session.
func (e *clientEnv) expectSessionless(n int) {
	e.Helper()
	xs := e.exchanges(n)
	e.Expect(xs).NotTo(BeEmpty(), "run %d sent nothing", n)
	e.Expect(xs[0].RPC.Method).To(Equal("server/discover"), "run %d's first request; a %s client asks server/discover first", n, wire.SessionlessProtocolVersion)
	for _, x := range xs {
		e.Expect(x.Method).To(Equal(http.MethodPost), "run %d sent a %s; %s has no GET stream and no DELETE", n, x.Method, wire.SessionlessProtocolVersion)
		e.Expect(x.RPC.Method).NotTo(Equal("initialize"), "run %d sent initialize; %s has none", n, wire.SessionlessProtocolVersion)
		e.Expect(x.SessionID).To(BeEmpty(), "run %d sent Mcp-Session-Id; %s has no sessions", n, wire.SessionlessProtocolVersion)
		e.Expect(x.ProtocolVersion).To(Equal(wire.SessionlessProtocolVersion), "run %d's %s named protocol version %q", n, x.RPC.Method, x.ProtocolVersion)
	}
}

// expectPolls expects run n's tasks/get to name id, at least one.
func (e *clientEnv) expectPolls(n int, id string) []exchange {
	e.Helper()
	gets := e.taskGets(n)
	e.Expect(gets).NotTo(BeEmpty(), "run %d never polled the task with tasks/get", n)
	for _, x := range gets {
		e.Expect(x.taskID()).To(Equal(id), "run %d polled another task than the stored one", n)
	}
	return gets
}

// taskStatuses are a run's task lines' statuses, in order.
func taskStatuses(cr *clientRun) string {
	var s []string
	for _, l := range cr.ofType(contract.LineTask) {
		s = append(s, l.Status)
	}
	return strings.Join(s, " ")
}

// taskChecks are the client checks of calls run as tasks.
func taskChecks() []def {
	done := fmt.Sprintf("completed %d steps", taskSteps)
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-TASK-PERSIST", Level: catalogue.Res, Revisions: catalogue.EveryRevision, SpecRef: catalogue.SpecExtTasks,
			Summary: "A call run as a task (task-call) stores the task id at once: killed after its first task line, the client's stored state (show) names the task the server created."},
			runs: 2, body: func(ctx context.Context, e *clientEnv) {
				_, id := e.killedTask(ctx, 0)
				b := e.run(ctx, actionRun(contract.ActionShow))
				e.Expect(b.stored().TaskID).To(Equal(id), "the stored task id after the kill")
			}},

		{Entry: catalogue.Entry{ID: "CLI-TASK-POLL-AFTER-KILL", Level: catalogue.Res, Revisions: catalogue.EveryRevision, SpecRef: catalogue.SpecExtTasks,
			Summary: "Killed while its task works and started again (task-resume), the client polls that task with tasks/get, reports it completed and prints its result."},
			runs: 2, waits: taskTakes, body: func(ctx context.Context, e *clientEnv) {
				_, id := e.killedTask(ctx, 0)
				b := e.run(ctx, taskRun(contract.ActionTaskResume))
				e.expectPolls(b.n, id)
				e.Expect(taskStatuses(b)).To(HaveSuffix("completed"), "the restarted client's task lines end with the task completed")
				e.Expect(resultText(b.result().Result)).To(Equal(done), "the task's result")
			}},

		{Entry: catalogue.Entry{ID: "CLI-TASK-POLL-INTERVAL", Level: catalogue.Res, Revisions: catalogue.EveryRevision, SpecRef: catalogue.SpecTasks + "#task-status",
			Summary: "Two tasks/get of one task are never closer than the task's pollInterval (with 10% leeway), before and after a kill."},
			runs: 2, waits: taskTakes + 3*taskPoll, body: func(ctx context.Context, e *clientEnv) {
				a, id := e.killedTask(ctx, 3)
				b := e.run(ctx, taskRun(contract.ActionTaskResume))
				for _, n := range []int{a.n, b.n} {
					gets := e.taskGets(n) // the killed run polled at least three times
					for _, x := range gets {
						e.Expect(x.taskID()).To(Equal(id), "run %d polled another task than its own", n)
					}
					for i := 1; i < len(gets); i++ {
						gap := gets[i].At.Sub(gets[i-1].At)
						e.Expect(gap).To(BeNumerically(">=", taskPoll-taskLeeway), "run %d's tasks/get %d came %v after the one before; the task's pollInterval is %v", n, i+1, gap, taskPoll)
					}
				}
			}},

		{Entry: catalogue.Entry{ID: "CLI-TASK-NO-RECREATE", Level: catalogue.Res, Revisions: catalogue.EveryRevision, SpecRef: catalogue.SpecExtTasks,
			Summary: "Killed and asked for the same call again (task-call), the client polls the task it stored: no second task-augmented tools/call."},
			runs: 2, waits: taskTakes, body: func(ctx context.Context, e *clientEnv) {
				_, id := e.killedTask(ctx, 0)
				b := e.run(ctx, taskRun(contract.ActionTaskCall))
				e.expectCount(e.taskCalls(b.n), 0, "asked for the same call again, the client created another task instead of polling task %s; its task-augmented tools/call", id)
				e.expectPolls(b.n, id)
				e.Expect(resultText(b.result().Result)).To(Equal(done), "the task's result")
			}},
	}
}
