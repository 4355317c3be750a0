package serverchecks

import (
	"context"
	"encoding/json"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// modernTaskChecks are the tasks checks that exist only in the
// io.modelcontextprotocol/tasks extension (2026-07-28).
func modernTaskChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "TASK-MCP-NAME", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.SpecExtTasks + "#streamable-http-routing-headers", Needs: []catalogue.Key{catalogue.KeyTask},
			Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/get without an Mcp-Name header, or with one naming another task, is refused with 400 and HeaderMismatch (-32020) (\"the client MUST set the Mcp-Name header to the value of params.taskId\"; servers \"MUST reject requests where the values specified in the headers do not match\", and a missing required standard header is a validation failure)."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				tk, _ := e.createTask(ctx, e.C, "", 0)
				e.reachable(ctx, tk.TaskID)
				for _, name := range []string{"", "other-" + newKey()} {
					what := "tasks/get of task " + tk.TaskID + " without Mcp-Name"
					if name != "" {
						what = "tasks/get of task " + tk.TaskID + " with Mcp-Name " + name
					}
					req, err := e.C.NewModernRequest(ctx, "tasks/get", map[string]any{"taskId": tk.TaskID}, wire.DeclaringTasks())
					e.Expect(err).NotTo(HaveOccurred())
					req.Header.Del(wire.HeaderMcpName)
					if name != "" {
						req.Header.Set(wire.HeaderMcpName, name)
					}
					e.modernError(e.modernDo(req, what), what, http.StatusBadRequest, codeHeaderMismatch)
				}
			}},

		{Entry: catalogue.Entry{ID: "TASK-REMOVED-METHODS", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.SEP2663, Needs: []catalogue.Key{catalogue.KeyTask},
			Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/result and tasks/list answer 404 with -32601 (\"tasks/result is removed; clients calling it MUST receive -32601 (Method Not Found)\"; tasks/list is removed, and an RPC method the server does not implement \"MUST respond with 404 Not Found and a JSON-RPC error with code -32601\")."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				tk, _ := e.createTask(ctx, e.C, "", 0)
				for _, method := range []string{"tasks/result", "tasks/list"} {
					resp, err := e.C.CallModern(ctx, method, map[string]any{"taskId": tk.TaskID}, wire.DeclaringTasks())
					e.Expect(err).NotTo(HaveOccurred(), "%s", method)
					e.modernError(resp, method+" (the extension has none: tasks/get carries the result)", http.StatusNotFound, codeMethodNotFound)
				}
			}},

		{Entry: catalogue.Entry{ID: "TASK-UNDECLARED", Level: catalogue.Must, Section: "tasks", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.SpecExtTasks + "#error-handling", Needs: []catalogue.Key{catalogue.KeyTask},
			Summary: "2026-07-28, io.modelcontextprotocol/tasks: tasks/get and tasks/cancel by a request that does not declare the extension answer 400 with -32021 and data.requiredCapabilities.extensions naming it (\"Servers MUST return this error for non-declaring clients issuing tasks/get, tasks/update, and tasks/cancel requests\")."},
			need: taskNeed, body: func(ctx context.Context, e *env) {
				tk, _ := e.createTask(ctx, e.C, "", 0)
				e.reachable(ctx, tk.TaskID)
				for _, method := range []string{"tasks/get", "tasks/cancel"} {
					resp, err := e.C.CallModern(ctx, method, map[string]any{"taskId": tk.TaskID}, nil)
					e.Expect(err).NotTo(HaveOccurred(), "%s", method)
					what := method + " of task " + tk.TaskID + " by a request that does not declare " + wire.TasksExtension
					rerr, _ := e.modernError(resp, what, http.StatusBadRequest, codeMissingCapability)
					var data struct {
						Required struct {
							Extensions map[string]json.RawMessage `json:"extensions"`
						} `json:"requiredCapabilities"`
					}
					_ = json.Unmarshal(rerr.Data, &data)
					e.Expect(data.Required.Extensions).To(HaveKey(wire.TasksExtension), "%s: error data %s; data.requiredCapabilities.extensions names the extension", what, orNull(rerr.Data))
				}
			}},
	}
}

// reachable waits until a tasks/get sent as the extension says resolves
// task id, so that a check that then sends one wrongly judges the refusal
// of a request about a task the server has (how soon it has it is
// TASK-DURABLE-CREATE's).
func (e *env) reachable(ctx context.Context, id string) {
	e.Eventually(func() bool {
		return e.taskRPC(ctx, e.C, "", "tasks/get", id, promptBound).Error == nil
	}).WithPolling(e.pollOf(id)).Should(BeTrue(), "tasks/get to resolve task %s", id)
}
