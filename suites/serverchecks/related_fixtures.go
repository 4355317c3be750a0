package serverchecks

import (
	"net/http"
	"slices"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// A fixture whose POST streams carry other requests' notifications.
func init() {
	servers.Register(servers.Fixture{
		Name:  "notifications-on-first-stream",
		About: "every progress notification of a session goes on the POST stream of its oldest pending tools/call, whichever call it belongs to",
		// EVT-REPLAY-STREAM needs a second call's notifications on that
		// call's own stream to cut it between them; here they come on the
		// first call's stream, so it skips, saying so.
		Breaks:       []string{"MSG-RELATED-STREAM", "EVT-REPLAY-STREAM"},
		ModernBreaks: []string{"MSG-RELATED-STREAM"},
		Wrap:         notesOnFirstStream,
	})
}

// pendingCalls are each session's tools/call POST streams that have not
// sent their response yet, oldest first.
type pendingCalls struct {
	mu  sync.Mutex
	sid map[string][]*servers.EventWriter
}

func (p *pendingCalls) add(sid string, ew *servers.EventWriter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sid[sid] = append(p.sid[sid], ew)
}

func (p *pendingCalls) remove(sid string, ew *servers.EventWriter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sid[sid] = slices.DeleteFunc(p.sid[sid], func(o *servers.EventWriter) bool { return o == ew })
	if len(p.sid[sid]) == 0 {
		delete(p.sid, sid)
	}
}

// older returns the session's oldest pending stream if it is older than
// ew, which is pending; nil otherwise. A stream only ever writes to an
// older one, so two streams never wait on each other's lock.
func (p *pendingCalls) older(sid string, ew *servers.EventWriter) *servers.EventWriter {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls := p.sid[sid]
	if len(calls) < 2 || calls[0] == ew || !slices.Contains(calls, ew) {
		return nil
	}
	return calls[0]
}

// notesOnFirstStream moves each progress notification of a tools/call's
// POST stream onto the session's oldest pending call's POST stream, as a
// server that ties every notification to the first request it holds
// does. The moved copy has no event id: it is in no stream's history.
func notesOnFirstStream(next http.Handler, _ server.Config) http.Handler {
	p := &pendingCalls{sid: map[string][]*servers.EventWriter{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		m := servers.PeekRPC(r)
		// Without a session (the sessionless revision) every pending call
		// of the server counts as the session's.
		if m.Method != "tools/call" || m.ID == nil {
			next.ServeHTTP(w, r)
			return
		}
		ew := servers.NewEventWriter(w)
		p.add(sid, ew)
		defer p.remove(sid, ew)
		ew.OnEvent = func(raw []byte) []byte {
			ev := servers.ParseEvent(raw)
			msg, ok := ev.Message()
			switch {
			case !ok:
			case msg.IsResponse():
				p.remove(sid, ew) // answered: no longer pending
			case msg.Method == "notifications/progress":
				if first := p.older(sid, ew); first != nil && first.Inject(servers.MessageEvent(ev.Data)) {
					return nil
				}
			}
			return raw
		}
		defer ew.Finish()
		next.ServeHTTP(ew, r)
	})
}
