package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// lostData is the data of the error a request gets when its session ended
// while it was served and took its answer with it.
type lostData struct {
	Reason string `json:"reason"` // session_ended or server_shutdown
}

// answerLost answers a request whose answer was lost because its session
// left the table while it was served (a DELETE, an expiry or a shutdown
// racing it) before its response was written: the go-sdk drops it then.
// Rather than a closed connection, an empty 200 or an SSE stream that
// ends with nothing, the client learns why: before any status line, 404
// (503 at shutdown) with a JSON-RPC error; on an SSE stream already begun,
// that error as the stream's last event. A JSON body already begun cannot
// be mended, and neither can a connection a stalled write had to abort.
func (s *Server) answerLost(je *jsonErrors, sess *session) {
	if len(je.id) == 0 {
		return // a notification or a batch: nothing to answer
	}
	je.reset() // a held-back refusal of the go-sdk's would only add to the confusion
	status, code := http.StatusNotFound, CodeSessionExpired
	if s.cfg.ExpiredResponse == ExpiredPlain {
		code = CodeSessionNotFound
	}
	msg := fmt.Sprintf("Session %s while the request was served; its answer was lost: reinitialize and send it again", sess.removal())
	data := lostData{Reason: "session_ended"}
	if s.closing.Load() {
		status, code = http.StatusServiceUnavailable, CodeInternalError
		msg = "Service Unavailable: the server shut down while the request was served; send it again once the server is back"
		data.Reason = "server_shutdown"
	}
	if !je.committed {
		if status == http.StatusServiceUnavailable {
			je.Header().Set("Retry-After", "1")
		}
		writeRPCErrorID(je.ResponseWriter, status, code, msg, data, je.id)
		return
	}
	if !strings.HasPrefix(je.Header().Get("Content-Type"), "text/event-stream") {
		return
	}
	body, _ := json.Marshal(rpcErrorResponse{JSONRPC: "2.0", Error: rpcError{Code: code, Message: msg, Data: data}, ID: je.id})
	if _, err := fmt.Fprintf(je.ResponseWriter, "event: message\ndata: %s\n\n", body); err == nil {
		http.NewResponseController(je.ResponseWriter).Flush()
	}
}
