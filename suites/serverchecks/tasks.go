package serverchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"sync"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// relatedTaskMeta is the _meta key tying tasks/result's answer to its task.
const relatedTaskMeta = "io.modelcontextprotocol/related-task"

// codeInvalidParams is what every refusal about a task id must be.
const codeInvalidParams = -32602

// minPoll is the shortest interval at which a check polls a task.
const minPoll = 50 * time.Millisecond

// taskSlack is added to the task tool's run for the waits of a task check.
const taskSlack = 2 * time.Second

// taskRun is how long the declared task tool runs.
func taskRun(c *target.Profile) time.Duration {
	if c.Tools.Task == nil {
		return 0
	}
	return c.Tools.Task.Duration.D()
}

// taskNeed is what a task check needs: the task's run, waited on twice
// (a first task and a second one, or a result and a pause), and slack.
func taskNeed(c *target.Profile) time.Duration { return 2*taskRun(c) + taskSlack }

// taskState is a task as tasks/get, tasks/cancel and CreateTaskResult
// carry it: in 2025-11-25, or flat with the outcome inline in the
// io.modelcontextprotocol/tasks extension (2026-07-28).
type taskState struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	TTL            *float64        `json:"ttl"`
	TTLMs          *float64        `json:"ttlMs"`
	PollInterval   float64         `json:"pollInterval"`
	PollIntervalMs float64         `json:"pollIntervalMs"`
	ResultType     string          `json:"resultType"`
	Result         json.RawMessage `json:"result"`
	Error          *wire.RPCError  `json:"error"`
}

// ttl is the reported ttl; nil when unlimited or not reported.
func (t taskState) ttl() *time.Duration {
	ms := t.TTL
	if ms == nil {
		ms = t.TTLMs
	}
	if ms == nil {
		return nil
	}
	d := time.Duration(*ms) * time.Millisecond
	return &d
}

// poll is the suggested poll interval, 0 if none.
func (t taskState) poll() time.Duration {
	return time.Duration(max(t.PollInterval, t.PollIntervalMs)) * time.Millisecond
}

// modern reports a target checked in the sessionless revision.
func (e *env) modern() bool { return wire.Revision(e.target.ProtocolVersion).Sessionless() }

// sessionOrNone returns the session a check's requests go on: a new one,
// or "" in the sessionless revision (no handshake) and against a
// stateless target (whose handshake still runs).
func (e *env) sessionOrNone(ctx context.Context, c *wire.Client) string {
	if e.modern() {
		return ""
	}
	return e.connect(ctx, c)
}

// send sends one request as the revision has it: on session sid, or
// sessionless, declaring the tasks extension.
func (e *env) taskCall(ctx context.Context, c *wire.Client, sid, method string, params map[string]any) (*wire.Response, error) {
	if e.modern() {
		return c.CallModern(ctx, method, params, wire.DeclaringTasks())
	}
	return c.Call(ctx, sid, method, params)
}

func (t taskState) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// createTask calls the task tool with params.task (ttl in ms if > 0) and
// returns the task of its CreateTaskResult and how long the answer took.
func (e *env) createTask(ctx context.Context, c *wire.Client, sid string, ttl time.Duration) (taskState, time.Duration) {
	tool := e.Config.Tools.Task
	p := wire.ToolParams(tool.Name, tool.Arguments, "")
	task := map[string]any{}
	if ttl > 0 && e.modern() {
		task["ttlMs"] = ttl.Milliseconds()
	} else if ttl > 0 {
		task["ttl"] = ttl.Milliseconds()
	}
	p["task"] = task
	start := time.Now()
	m := e.rpc(ctx, c, sid, "tools/call", p)
	took := time.Since(start)
	e.Expect(m.Error).To(BeNil(), "tools/call of %s with params.task answered an error", tool.Name)
	var res struct {
		Task *taskState `json:"task"`
	}
	if e.modern() {
		var flat taskState
		e.Expect(json.Unmarshal(m.Result, &flat)).To(Succeed(), "CreateTaskResult")
		e.Expect(flat.ResultType).To(Equal("task"), "tools/call declaring %s answered %s, not a CreateTaskResult {resultType: task}", wire.TasksExtension, m.Result)
		res.Task = &flat
	}
	e.Expect(json.Unmarshal(m.Result, &res)).To(Succeed(), "CreateTaskResult")
	e.Expect(res.Task).NotTo(BeNil(), "tools/call with params.task answered %s, not a CreateTaskResult {task}", m.Result)
	e.Expect(res.Task.TaskID).NotTo(BeEmpty(), "CreateTaskResult without task.taskId")
	e.Logf("task %s created: %s, after %v", res.Task.TaskID, res.Task.Status, took.Round(time.Millisecond))
	e.mu.Lock()
	if e.polls == nil {
		e.polls = map[string]time.Duration{}
	}
	e.polls[res.Task.TaskID] = res.Task.poll()
	e.mu.Unlock()
	e.Cleanup(func(ctx context.Context) { e.settleTask(ctx, c, sid, res.Task.TaskID) })
	return *res.Task, took
}

// rpc sends one request and returns its answer, failing the check on a
// transport error, an HTTP error status or an answer without a response.
func (e *env) rpc(ctx context.Context, c *wire.Client, sid, method string, params map[string]any) wire.Message {
	resp, err := e.taskCall(ctx, c, sid, method, params)
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	e.Expect(resp.Status).To(Equal(http.StatusOK), "%s: HTTP status (body %q)", method, resp.Body)
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	return m
}

// taskRPC sends a tasks/* request about id, bounded by d: a hang fails.
func (e *env) taskRPC(ctx context.Context, c *wire.Client, sid, method, id string, d time.Duration) wire.Message {
	bctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := e.taskCall(bctx, c, sid, method, map[string]any{"taskId": id})
	if err != nil && errors.Is(bctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		e.Failf("%s of task %s: no answer within %v", method, id, d)
	}
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	e.Expect(resp.Status).To(BeNumerically("<", 500), "%s of task %s: HTTP status (body %q)", method, id, resp.Body)
	e.Expect(resp.Status).To(Equal(http.StatusOK), "%s of task %s: HTTP status (body %q)", method, id, resp.Body)
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	return m
}

// taskOf decodes a tasks/get or tasks/cancel answer.
func (e *env) taskOf(m wire.Message, what string) taskState {
	e.Expect(m.Error).To(BeNil(), "%s answered an error", what)
	var t taskState
	e.Expect(json.Unmarshal(m.Result, &t)).To(Succeed(), "%s", what)
	return t
}

// expectRefused expects a -32602 error answer.
func (e *env) expectRefused(m wire.Message, what string) {
	e.Expect(m.Error).NotTo(BeNil(), "%s succeeded (%s); want error %d", what, m.Result, codeInvalidParams)
	e.Expect(m.Error.Code).To(Equal(codeInvalidParams), "%s: error %q", what, m.Error.Message)
}

// taskResult waits on tasks/result (bounded by the task's run and slack)
// and expects a result, not an error, tied to the task by its _meta. In
// the extension tasks/get carries the result: it polls until completed.
func (e *env) taskResult(ctx context.Context, c *wire.Client, sid, id string) (res map[string]any) {
	// Every check that reads a task's result stands on reading it as the
	// revision says, which TASK-RESULT-REPEATABLE grades.
	e.OnPremise(catalogue.PremiseTaskResult, func() { res = e.readTaskResult(ctx, c, sid, id) })
	return res
}

// readTaskResult is taskResult's step.
func (e *env) readTaskResult(ctx context.Context, c *wire.Client, sid, id string) map[string]any {
	if e.modern() {
		poll := e.pollOf(id) // as a client does: at the task's pollInterval
		var t taskState
		e.Pause(poll)
		e.Eventually(func() bool {
			t = e.taskOf(e.taskRPC(ctx, c, sid, "tasks/get", id, promptBound), "tasks/get")
			return t.terminal()
		}).WithPolling(poll).Should(BeTrue(), "task %s to finish", id)
		e.Expect(t.Status).To(Equal("completed"), "task %s (error %v)", id, t.Error)
		var res map[string]any
		e.Expect(json.Unmarshal(t.Result, &res)).To(Succeed(), "the completed task's inline result %s", t.Result)
		return res
	}
	m := e.taskRPC(ctx, c, sid, "tasks/result", id, taskNeed(e.Config))
	e.Expect(m.Error).To(BeNil(), "tasks/result of task %s answered an error", id)
	var res map[string]any
	e.Expect(json.Unmarshal(m.Result, &res)).To(Succeed(), "tasks/result")
	meta, _ := res["_meta"].(map[string]any)
	rel, _ := meta[relatedTaskMeta].(map[string]any)
	e.Expect(rel).To(HaveKeyWithValue("taskId", id), "tasks/result lacks _meta[%q].taskId = %q: %s", relatedTaskMeta, id, m.Result)
	return res
}

// settleTask waits (bounded by the task's run) until a task the check
// created has ended, before its session goes: the check leaves no work
// behind, and a target that mishandles a task outliving its session is
// not knocked over by another check's cleanup.
func (e *env) settleTask(ctx context.Context, c *wire.Client, sid, id string) {
	ctx, cancel := context.WithTimeout(ctx, taskNeed(e.Config))
	defer cancel()
	poll := e.suggestedPoll(id) // the check may be over: its own context bounds the waits
	for {
		resp, err := e.taskCall(ctx, c, sid, "tasks/get", map[string]any{"taskId": id})
		if err != nil || resp.Status != http.StatusOK {
			return
		}
		m, err := resp.Result()
		var t taskState
		if err != nil || m.Error != nil || json.Unmarshal(m.Result, &t) != nil || t.terminal() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}

// readyForTask readies c's connection before the task exists: a
// server/discover, or a request on session sid; replica names the replica
// c reaches ("" for replica A).
func (e *env) readyForTask(ctx context.Context, c *wire.Client, sid, replica string) {
	if e.modern() {
		_, err := c.CallModern(ctx, "server/discover", nil, nil)
		where := "server/discover"
		if replica != "" {
			where += " on replica " + replica
		}
		e.Expect(err).NotTo(HaveOccurred(), where)
		return
	}
	if replica == "" {
		e.expectWorks(ctx, c, sid)
		return
	}
	resp, err := c.Call(ctx, sid, "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred(), "tools/list on replica %s", replica)
	e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list on replica %s %s initialized on replica A, before the task is asked for there: %s", replica, onSession(sid), resp.Body)
}

// pollOf is the poll interval of task id as the check waits it: the
// server's, at least minPoll, bounded by the check's deadline (boundPoll).
func (e *env) pollOf(id string) time.Duration { return e.boundPoll(id, e.suggestedPoll(id)) }

// suggestedPoll is the poll interval the server suggested for task id,
// at least minPoll.
func (e *env) suggestedPoll(id string) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(e.polls[id], minPoll)
}

// taskMethods are the requests about one task a requestor may send.
func (e *env) taskMethods() []string {
	if e.modern() {
		return []string{"tasks/get", "tasks/cancel"}
	}
	return []string{"tasks/get", "tasks/result", "tasks/cancel"}
}

// taskChecks are the tasks checks (2025-11-25 tasks utility).
func taskChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "TASK-CREATE-FAST", Level: catalogue.Should, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#creating-tasks", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "A tools/call with params.task answers a CreateTaskResult (a task working) at once, long before the tool would have finished."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				run := taskRun(e.Config)
				tk, took := e.createTask(ctx, e.C, sid, 0)
				e.Expect(took).To(BeNumerically("<", run), "CreateTaskResult took %v; the task runs about %v, so the answer waited on the work", took, run)
				e.Expect(tk.terminal()).To(BeFalse(), "the CreateTaskResult's task is already %s", tk.Status)
			}},

		{Entry: catalogue.Entry{ID: "TASK-DURABLE-CREATE", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecExtTasks + "#task-creation", Needs: []catalogue.Key{catalogue.KeyTask},
			Summary: "A tasks/get on another connection and session sent right after the CreateTaskResult arrives resolves the task; with --replica-url, on every other replica too (\"A server MUST NOT return CreateTaskResult until the task is durably created\", \"until a tasks/get for the returned taskId would resolve\"; \"In eventually-consistent environments, the server MUST wait for consistency before responding\")."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				other := e.ownClient() // its own connection, ready before the task exists
				e.readyForTask(ctx, other, sid, "")
				// Every other replica too: a store that is only eventually
				// consistent must be waited on before the answer.
				var replicas []*wire.Client
				if len(e.target.Replicas) > 0 {
					replicas = e.replicas()[1:]
				}
				for i, c := range replicas {
					e.readyForTask(ctx, c, sid, replicaName(i+1))
				}
				tk, _ := e.createTask(ctx, e.C, sid, 0)
				got := e.taskOf(e.taskRPC(ctx, other, sid, "tasks/get", tk.TaskID, promptBound), "tasks/get on another connection right after the CreateTaskResult")
				e.Expect(got.TaskID).To(Equal(tk.TaskID))
				e.Expect(got.Status).NotTo(BeElementOf("failed", "cancelled"), "task %s right after its creation", tk.TaskID)
				for i, c := range replicas {
					name := replicaName(i + 1)
					m := e.taskRPC(ctx, c, sid, "tasks/get", tk.TaskID, promptBound)
					if m.Error != nil && m.Error.Code == codeInvalidParams {
						e.Failf("tasks/get on replica %s right after replica A's CreateTaskResult does not find task %s (%d %q): replica A answered before the task was where every replica reads it",
							name, tk.TaskID, m.Error.Code, m.Error.Message)
					}
					got := e.taskOf(m, "tasks/get on replica "+name+" right after replica A's CreateTaskResult")
					e.Expect(got.TaskID).To(Equal(tk.TaskID), "tasks/get on replica %s", name)
					e.Expect(got.Status).NotTo(BeElementOf("failed", "cancelled"), "task %s on replica %s right after its creation", tk.TaskID, name)
				}
			}},

		{Entry: catalogue.Entry{ID: "TASK-SURVIVES-CUT", Level: catalogue.Should, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#transport-considerations", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "Cutting every connection while tasks/result waits does not cancel the task: it completes and its result is retrievable."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				e.needProxy()
				sid := e.sessionOrNone(ctx, e.C)
				tk, _ := e.createTask(ctx, e.C, sid, 0)
				var wg sync.WaitGroup
				defer wg.Wait()
				wctx, stop := context.WithCancel(ctx)
				defer stop()
				if !e.modern() { // the extension has no waiting request: the cut hits the client's connections
					wg.Go(func() { _, _ = e.C.Call(wctx, sid, "tasks/result", map[string]any{"taskId": tk.TaskID}) })
				}
				e.Pause(taskRun(e.Config) / 3) // tasks/result is waiting
				e.refresh()
				stop()
				wg.Wait()
				got := e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", tk.TaskID, promptBound), "tasks/get after the cut")
				e.Expect(got.Status).NotTo(BeElementOf("failed", "cancelled"), "task %s after its tasks/result connection was cut", tk.TaskID)
				e.taskResult(ctx, e.C, sid, tk.TaskID)
				got = e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", tk.TaskID, promptBound), "tasks/get after the result")
				e.Expect(got.Status).To(Equal("completed"), "task %s after tasks/result answered", tk.TaskID)
			}},

		{Entry: catalogue.Entry{ID: "TASK-RESULT-REPEATABLE", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#retrieving-task-results", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "tasks/result of a completed task answers the same result twice, and again after a reconnect, with the related-task _meta naming it."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				tk, _ := e.createTask(ctx, e.C, sid, 0)
				first := e.taskResult(ctx, e.C, sid, tk.TaskID)
				second := e.taskResult(ctx, e.C, sid, tk.TaskID)
				e.Expect(reflect.DeepEqual(first, second)).To(BeTrue(), "the second tasks/result differs from the first:\n%v\n%v", second, first)
				e.tr.CloseIdleConnections() // a reconnect: the next request opens a new connection
				third := e.taskResult(ctx, e.ownClient(), sid, tk.TaskID)
				e.Expect(reflect.DeepEqual(first, third)).To(BeTrue(), "tasks/result after a reconnect differs from the first:\n%v\n%v", third, first)
			}},

		{Entry: catalogue.Entry{ID: "TASK-SURVIVES-REFRESH", Level: catalogue.Res, Section: "tasks", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "tasks-bound-to-the-principal", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "After a refresh (every connection cut, the session abandoned) the same principal reaches the task from a new session; a session-scoped task store fails."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				e.needProxy()
				old := e.sessionOrNone(ctx, e.C)
				tk, _ := e.createTask(ctx, e.C, old, 0)
				e.Pause(taskRun(e.Config) / 4) // the refresh comes while the task works
				e.refresh()
				sid := e.sessionOrNone(ctx, e.C) // the reloaded page initializes again, same login
				m := e.taskRPC(ctx, e.C, sid, "tasks/get", tk.TaskID, promptBound)
				if m.Error != nil && m.Error.Code == codeInvalidParams {
					if o := e.taskRPC(ctx, e.C, old, "tasks/get", tk.TaskID, promptBound); o.Error == nil {
						e.Failf("task %s is reachable only from the session that created it (new session: %q): the target scopes tasks to the session, so a refreshed client that initializes again loses its task; the spec binds tasks to the authorization context", tk.TaskID, m.Error.Message)
					}
				}
				got := e.taskOf(m, "tasks/get from the new session")
				e.Expect(got.Status).NotTo(BeElementOf("failed", "cancelled"), "task %s after the refresh", tk.TaskID)
				e.taskResult(ctx, e.C, sid, tk.TaskID)
			}},

		{Entry: catalogue.Entry{ID: "TASK-PRINCIPAL-BOUND", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#security-considerations", Needs: []catalogue.Key{catalogue.KeyTask, catalogue.KeyPrincipals}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "Another principal gets -32602 for tasks/get, tasks/result and tasks/cancel of the task, and its tasks/list does not show it."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				tk, _ := e.createTask(ctx, e.C, sid, 0)
				other := e.as(1)
				osid := e.sessionOrNone(ctx, other)
				for _, method := range e.taskMethods() {
					e.expectRefused(e.taskRPC(ctx, other, osid, method, tk.TaskID, promptBound), method+" by "+e.principal(1)+" of "+e.principal(0)+"'s task")
				}
				if e.modern() {
					e.taskResult(ctx, e.C, sid, tk.TaskID)
					return
				}
				lm := e.rpc(ctx, other, osid, "tasks/list", map[string]any{})
				if lm.Error == nil {
					var list struct {
						Tasks []taskState `json:"tasks"`
					}
					e.Expect(json.Unmarshal(lm.Result, &list)).To(Succeed(), "tasks/list")
					for _, t := range list.Tasks {
						e.Expect(t.TaskID).NotTo(Equal(tk.TaskID), "%s's tasks/list shows %s's task", e.principal(1), e.principal(0))
					}
				} else {
					e.Logf("tasks/list by %s: error %d %s", e.principal(1), lm.Error.Code, lm.Error.Message)
				}
				// The owner's result shows the other's cancel did not take.
				e.taskResult(ctx, e.C, sid, tk.TaskID)
			}},

		{Entry: catalogue.Entry{ID: "TASK-UNKNOWN-ID", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#error-handling", Needs: []catalogue.Key{catalogue.KeyTask},
			Summary: "tasks/get, tasks/result and tasks/cancel of an unknown task id answer -32602 at once: never a hang, a 5xx or a success."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				// One id shaped like many servers' own, one like none.
				for _, unknown := range []string{rand.Text(), "unknown-task-" + rand.Text()} {
					for _, method := range e.taskMethods() {
						m := e.taskRPC(ctx, e.C, sid, method, unknown, promptBound)
						if e.modern() && method == "tasks/cancel" && m.Error == nil {
							// The extension: "Servers SHOULD return this error for
							// tasks/update and tasks/cancel"; only tasks/get's is a MUST.
							e.Logf("tasks/cancel of unknown task id %s was acknowledged; the extension asks for -32602 (a SHOULD)", unknown)
							continue
						}
						e.expectRefused(m, method+" of unknown task id "+unknown)
					}
				}
			}},

		{Entry: catalogue.Entry{ID: "TASK-CANCEL-TERMINAL", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#cancelling-tasks", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "tasks/cancel of a completed task answers -32602; a cancelled working task is cancelled in the answer and stays cancelled."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				done, _ := e.createTask(ctx, e.C, sid, 0)
				e.taskResult(ctx, e.C, sid, done.TaskID)
				if m := e.taskRPC(ctx, e.C, sid, "tasks/cancel", done.TaskID, promptBound); e.modern() {
					e.Expect(m.Error).To(BeNil(), "tasks/cancel of completed task %s: the extension's cancel is idempotent, an acknowledgement", done.TaskID)
				} else {
					e.expectRefused(m, "tasks/cancel of completed task "+done.TaskID)
				}
				got := e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", done.TaskID, promptBound), "tasks/get after the refused cancel")
				e.Expect(got.Status).To(Equal("completed"), "completed task %s after a tasks/cancel", done.TaskID)

				working, _ := e.createTask(ctx, e.C, sid, 0)
				if m := e.taskRPC(ctx, e.C, sid, "tasks/cancel", working.TaskID, promptBound); e.modern() {
					e.Expect(m.Error).To(BeNil(), "tasks/cancel of a working task")
					e.Pause(e.pollOf(working.TaskID))
					got = e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", working.TaskID, promptBound), "tasks/get after tasks/cancel")
					e.Expect(got.Status).To(Equal("cancelled"), "the task after tasks/cancel was acknowledged")
				} else {
					got = e.taskOf(m, "tasks/cancel of a working task")
					e.Expect(got.Status).To(Equal("cancelled"), "tasks/cancel answers the task, cancelled")
				}
				e.Pause(taskRun(e.Config)) // past the end the work would have had
				got = e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", working.TaskID, promptBound), "tasks/get of the cancelled task")
				e.Expect(got.Status).To(Equal("cancelled"), "cancelled task %s later", working.TaskID)
			}},

		{Entry: catalogue.Entry{ID: "TASK-TTL-KEPT", Level: catalogue.Should, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecTasks + "#task-lifecycle", Needs: []catalogue.Key{catalogue.KeyTask}, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "A completed task's result is still retrievable shortly before its ttl elapses: the ttl reported in its CreateTaskResult, or the one the check asked for when the server granted longer."},
			need: ttlNeed, body: func(ctx context.Context, e *env) { e.ttlKept(ctx) }},

		{Entry: catalogue.Entry{ID: "TASK-RESTART", Level: catalogue.Res, Section: "tasks", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.ResilienceProfile + "tasks-across-restarts", Needs: []catalogue.Key{catalogue.KeyTask}, Restarts: true, Exclusive: true, DependsOn: []string{"TASK-DURABLE-CREATE"},
			Summary: "After a restart, a request for a task made before answers at once (the task, or -32602 if the store is not durable; never a hang or 5xx), and a new task runs to its result."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				sid := e.sessionOrNone(ctx, e.C)
				tk, _ := e.createTask(ctx, e.C, sid, 0)
				e.Logf("!! F-RESTART: restarting the target")
				e.Expect(e.target.Restart(ctx)).To(Succeed(), "restart the target")
				e.tr.CloseIdleConnections()
				nsid := e.sessionOrNone(ctx, e.C)
				m := e.taskRPC(ctx, e.C, nsid, "tasks/get", tk.TaskID, promptBound)
				if m.Error != nil {
					e.expectRefused(m, "tasks/get after the restart of task "+tk.TaskID+" made before")
					e.Logf("the task did not survive the restart (-32602): the task store is not durable")
				} else {
					e.Logf("task %s survived the restart: %s", tk.TaskID, e.taskOf(m, "tasks/get after the restart").Status)
				}
				next, _ := e.createTask(ctx, e.C, nsid, 0)
				e.taskResult(ctx, e.C, nsid, next.TaskID)
			}},
	}
}
