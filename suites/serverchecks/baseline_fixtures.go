package serverchecks

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures whose calls fall short with no fault at all, or whose replay
// loses a response once.
func init() {
	servers.Register(
		servers.Fixture{
			Name: "last-progress-dropped",
			About: "the last progress notification of every call never reaches its POST stream (the response overtakes it), though the server stores it for replay: " +
				"an undisturbed call of long_operation delivers 4 of its 5 notifications",
			// The checks that count the tool's notifications judge them
			// against what the undisturbed call delivered, and pass: none of
			// them is about the tool itself.
			Breaks: []string{"TOOL-AS-DECLARED"},
			Wrap:   lastProgressDropped,
		},
		servers.Fixture{
			Name:  "first-resume-loses-response",
			About: "the first GET resuming a POST stream from a given Last-Event-ID replays the missed notifications but not the response; a second resume from the same id replays both",
			// The call is not cancelled: DISCONNECT-NOT-CANCEL resumes twice
			// and passes. The checks that grade one resume's replay fail.
			Breaks: []string{"EVT-REPLAY-POST", "REDIRECT-NO-RESPONSE"},
			Wrap:   firstResumeLosesResponse,
		},
	)
}

// lastProgressDropped drops, from every POST stream, the progress
// notification that completes its call (progress equal to total); the
// event store keeps it, so a resumed stream replays it.
func lastProgressDropped(next http.Handler, _ server.Config) http.Handler {
	return onPOSTEvents(next, func(raw []byte) []byte {
		if m, ok := servers.ParseEvent(raw).Message(); ok && m.Method == "notifications/progress" {
			var p struct{ Progress, Total float64 }
			if json.Unmarshal(m.Params, &p) == nil && p.Total > 0 && p.Progress == p.Total {
				return nil
			}
		}
		return raw
	})
}

// firstResumeLosesResponse drops the JSON-RPC responses from the first
// resume of a POST stream from each Last-Event-ID of a session.
func firstResumeLosesResponse(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	resumed := map[[2]string]bool{} // session, Last-Event-ID
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !servers.IsPOSTResume(r) {
			next.ServeHTTP(w, r)
			return
		}
		key := [2]string{r.Header.Get(wire.HeaderSessionID), r.Header.Get(wire.HeaderLastEventID)}
		mu.Lock()
		first := !resumed[key]
		resumed[key] = true
		mu.Unlock()
		if !first {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(raw []byte) []byte {
				if m, ok := servers.ParseEvent(raw).Message(); ok && m.IsResponse() {
					return nil
				}
				return raw
			}
		})
	})
}
