package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// sessionWait is ctx, ended also when sess leaves the table (DELETE,
// expiry, removal on another replica, shutdown). stop releases it.
func sessionWait(ctx context.Context, sess *session) (wait context.Context, stop func()) {
	wait, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(sess.ctx, cancel)
	return wait, func() { unhook(); cancel() }
}

// waitEndedData is the data of the error a tasks/result gets when its wait
// ends with its session or the server.
type waitEndedData struct {
	Reason string `json:"reason"` // session_ended or server_shutdown
	TaskID string `json:"taskId"`
}

// writeWaitEnded answers a tasks/result whose session left the table while
// it waited. The task is the principal's, not the session's: the client
// asks again on a new session, or, at shutdown, once the server is back.
func (s *Server) writeWaitEnded(w http.ResponseWriter, sess *session, m taskMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(m.Params, &p)
	if s.closing.Load() {
		w.Header().Set("Retry-After", "1")
		writeRPCErrorID(w, http.StatusServiceUnavailable, CodeInternalError,
			fmt.Sprintf("Service Unavailable: the server is shutting down, so tasks/result stopped waiting for task %q; ask again once it is back", p.TaskID),
			waitEndedData{Reason: "server_shutdown", TaskID: p.TaskID}, m.ID)
		return
	}
	code := CodeSessionExpired
	if s.cfg.ExpiredResponse == ExpiredPlain {
		code = CodeSessionNotFound
	}
	writeRPCErrorID(w, http.StatusNotFound, code,
		fmt.Sprintf("Session %s while tasks/result waited for task %q; the task is not the session's and goes on: reinitialize and call tasks/result again", sess.removal(), p.TaskID),
		waitEndedData{Reason: "session_ended", TaskID: p.TaskID}, m.ID)
}
