package serverchecks

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/target"
)

// ttlMargin is how long before the ttl elapses TASK-TTL-KEPT asks for
// the result.
// Loaded machines delay a check's timers by hundreds of milliseconds.
const ttlMargin = 2 * time.Second

// pollShare: a poll wait a check plans from the server's suggestion is at
// most this share of the time left before the check's deadline, so a few
// polls fit whatever interval the server suggests.
const pollShare = 4

// ttlAsked is the ttl TASK-TTL-KEPT asks for: the task's run, and room to
// ask for its result once it has completed.
func ttlAsked(c *target.Profile) time.Duration { return taskRun(c) + 2*taskSlack }

// ttlNeed is what TASK-TTL-KEPT needs: the ttl it asks for, then the
// result asked for as taskResult bounds it.
func ttlNeed(c *target.Profile) time.Duration { return ttlAsked(c) + taskRun(c) + taskSlack }

// ttlKept is TASK-TTL-KEPT: a completed task and its result are still
// there shortly before the ttl elapses. A receiver may grant a longer ttl
// than asked; the check observes up to the one it asked for, which its
// budget covers, and no further.
func (e *env) ttlKept(ctx context.Context) {
	sid := e.sessionOrNone(ctx, e.C)
	asked := ttlAsked(e.Config)
	sent := time.Now()
	tk, _ := e.createTask(ctx, e.C, sid, asked)
	keep := e.keptFor(tk, asked)
	e.observable(ctx, tk.TaskID, sent, keep)
	poll := e.ttlPoll(tk, keep)
	// Poll as a client does, never asking for the result early.
	e.Pause(poll)
	e.Eventually(func() string {
		return e.taskOf(e.taskRPC(ctx, e.C, sid, "tasks/get", tk.TaskID, promptBound), "tasks/get while polling").Status
	}).WithPolling(poll).Should(Equal("completed"), "task %s to complete", tk.TaskID)
	// Shortly before: a margin for the request's own latency and, in the
	// extension, the poll interval taskResult waits first.
	margin := ttlMargin
	if e.modern() {
		margin += e.pollOf(tk.TaskID)
	}
	late := sent.Add(keep - margin)
	if wait := time.Until(late); wait > 0 {
		e.Pause(wait)
	} else {
		e.Logf("the ttl %v had nearly elapsed when the task completed", keep)
	}
	// The task outlives the session: a client whose session ended
	// meanwhile asks from a new one.
	if resp, err := e.C.Call(ctx, sid, "ping", nil); !e.modern() && err == nil && resp.Status == http.StatusNotFound {
		e.Logf("the session is gone (404): asking for the result from a new session")
		sid = e.connect(ctx, e.C)
	}
	e.taskResult(ctx, e.C, sid, tk.TaskID)
	e.Logf("task %s and its result were there %v after its creation (ttl %v)", tk.TaskID, time.Since(sent).Round(time.Millisecond), keep)
}

// keptFor is how long TASK-TTL-KEPT expects the task kept: the reported
// ttl, but no longer than the one asked for (a longer grant must still
// honour what was asked), and the one asked for when none is reported.
func (e *env) keptFor(tk taskState, asked time.Duration) time.Duration {
	t := tk.ttl()
	switch {
	case t == nil:
		e.Logf("no ttl reported: the result is kept without limit; the check observes it up to the requested ttl of %v", asked)
		return asked
	case *t > asked:
		e.Logf("the server granted a ttl of %v, longer than the %v asked for (a receiver may override the requested ttl): the check observes the task up to the requested ttl only", *t, asked)
		return asked
	}
	return *t
}

// ttlPoll is the interval at which TASK-TTL-KEPT polls task tk, kept
// for keep: the server's (a quarter of the task's run if none), short
// enough that the polls before the observation end well before the ttl
// does, and bounded by the check's deadline. taskResult polls at it too.
func (e *env) ttlPoll(tk taskState, keep time.Duration) time.Duration {
	poll := tk.poll()
	if poll <= 0 {
		poll = taskRun(e.Config) / 4
	}
	poll = max(poll, minPoll)
	if most := max(keep/pollShare, minPoll); poll > most {
		e.Logf("task %s: the server suggests polling every %v; the check polls every %v, to observe the task before its ttl of %v elapses", tk.TaskID, poll, most, keep)
		poll = most
	}
	poll = e.boundPoll(tk.TaskID, poll)
	e.mu.Lock()
	e.polls[tk.TaskID] = poll
	e.mu.Unlock()
	return poll
}

// observable ends the check as inconclusive when the moment to observe,
// keep after the task's creation, comes after the check's deadline:
// waiting for it would end the check on its own budget, which says
// nothing of the target.
func (e *env) observable(ctx context.Context, id string, sent time.Time, keep time.Duration) {
	dl, ok := ctx.Deadline()
	if !ok || !sent.Add(keep).After(dl) {
		return
	}
	e.Inconclusivef("whether task %s and its result are kept until shortly before its ttl of %v elapses could not be observed: "+
		"the check's deadline (its budget, or what was left of the run's --timeout) comes %v after the task's creation, before that moment",
		id, keep, dl.Sub(sent).Round(time.Millisecond))
}

// boundPoll bounds a poll wait for task id that a check plans from the
// server's suggested interval p to a pollShare of the time left before
// the check's deadline, so that the wait judges the target, not the
// check's budget. The check then polls sooner than suggested, and says so.
func (e *env) boundPoll(id string, p time.Duration) time.Duration {
	dl, ok := e.Context().Deadline()
	if !ok {
		return p
	}
	left := time.Until(dl)
	most := max(left/pollShare, minPoll).Round(time.Millisecond)
	if p <= most {
		return p
	}
	e.Logf("task %s: the server suggests polling every %v; the check polls every %v, so that its waits end within the %v left before its deadline",
		id, p, most, left.Round(time.Millisecond))
	return most
}
