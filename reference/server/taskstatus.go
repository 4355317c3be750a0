package server

import (
	"encoding/json"

	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// taskStatusMethod is the 2025-11-25 notification of a task's new status.
const taskStatusMethod = "notifications/tasks/status"

// notifyTaskStatus sends notifications/tasks/status with the task (as
// tasks/get would return it) to the standalone GET of the session that
// created the task, if that GET is connected on this replica. Requestors
// poll regardless (the spec's MAY), so nothing is stored or replayed: with
// no GET connected, the notification is dropped. The task's origin is
// forgotten at its terminal status. Sessionless (2026-07-28) tasks have no origin and get none.
func (s *Server) notifyTaskStatus(snap tasks.Snapshot) {
	v, ok := s.taskOrigin.Load(snap.ID)
	if !ok {
		return
	}
	if snap.Status.Terminal() {
		s.taskOrigin.Delete(snap.ID)
	}
	sess := s.lookup(v.(string))
	if sess == nil || sess.principal != snap.Owner {
		return
	}
	sess.mu.Lock()
	g := sess.get
	sess.mu.Unlock()
	if g == nil {
		return
	}
	b, _ := json.Marshal(struct {
		JSONRPC string     `json:"jsonrpc"`
		Method  string     `json:"method"`
		Params  tasks.Task `json:"params"`
	}{"2.0", taskStatusMethod, snap.Wire()})
	if err := g.w.notify(b); err != nil {
		s.log.Info("task status notification not sent", "task", snap.ID, "session", sess.id, "err", err)
	}
}
