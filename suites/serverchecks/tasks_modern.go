package serverchecks

import (
	"context"

	. "github.com/onsi/gomega"
)

// modernTaskChecks are the tasks checks that exist only in the
// io.modelcontextprotocol/tasks extension (2026-07-28).
func modernTaskChecks() []def {
	return []def{}
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
