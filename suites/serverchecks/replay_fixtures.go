package serverchecks

import (
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that replay the wrong events for a Last-Event-ID.
func init() {
	servers.Register(
		servers.Fixture{
			Name:   "replay-mixes-streams",
			About:  "resuming a POST stream also replays notifications of the session's other POST streams",
			Breaks: []string{"EVT-REPLAY-STREAM"},
			Wrap:   replayMixesStreams,
		},
		servers.Fixture{
			Name:   "standalone-replay-mixes-streams",
			About:  "POST streams carry no event ids (nor a priming event), and resuming the standalone GET stream also replays the notifications that were sent on the session's POST streams",
			Breaks: []string{"EVT-REPLAY-STREAM", "SSE-PRIMING"},
			Skips:  resumesPOST,
			Wrap:   postStreamsWithoutIDs(true),
		},
		servers.Fixture{
			// The pair of the one above: its standalone replay is right.
			Name:   "post-streams-without-ids",
			About:  "POST streams carry no event ids (nor a priming event); the standalone GET stream and its replay are the reference's",
			Breaks: []string{"SSE-PRIMING"},
			Skips:  resumesPOST,
			Wrap:   postStreamsWithoutIDs(false),
		},
		servers.Fixture{
			Name:   "post-replay-from-start",
			About:  "resuming a POST stream replays it from its first event, ignoring where Last-Event-ID points",
			Breaks: []string{"EVT-REPLAY-POST", "REPLAY-GAP", "RECREATE-INFLIGHT"},
			Wrap:   lastIDFromStart(servers.IsPOSTResume),
		},
		servers.Fixture{
			Name:   "standalone-replay-from-start",
			About:  "resuming the standalone GET stream replays it from its first event, ignoring where Last-Event-ID points",
			Breaks: []string{"REPLAY-GAP"},
			Wrap: func(next http.Handler, cfg server.Config) http.Handler {
				return resumeAfterCut(lastIDFromStart(func(r *http.Request) bool {
					return servers.IsStandaloneGET(r) && r.Header.Get(wire.HeaderLastEventID) != ""
				})(next, cfg))
			},
		},
		servers.Fixture{
			Name:   "replay-crosses-sessions",
			About:  "a Last-Event-ID from another session replays that session's stream",
			Breaks: []string{"REPLAY-SESSION-SCOPED"},
			Wrap:   replayCrossesSessions,
		},
		servers.Fixture{
			Name:      "gap-notes-lost",
			About:     "a call's notifications sent while its cut POST stream is not resumed and no GET stream is connected are lost, not held for the stream the client comes back on",
			Breaks:    []string{"REPLAY-GAP", "EVT-REPLAY-POST"},
			Configure: func(c *server.Config) { c.DropGapNotes = true },
		},
		servers.Fixture{
			Name:      "events-never-evicted",
			About:     "events are kept for an hour while the profile declares 2s: resuming from an old id replays instead of a clear error",
			Breaks:    []string{"REPLAY-EVICTION"},
			Configure: func(c *server.Config) { c.EventMaxAge = time.Hour },
		},
	)
}

// resumesPOST are the checks that resume a POST stream: event ids are a
// MAY, so against POST streams without them they skip.
var resumesPOST = []string{"EVT-REPLAY-POST", "DISCONNECT-NOT-CANCEL", "RECREATE-INFLIGHT", "REDIRECT-NO-RESPONSE",
	"REPLAY-GAP", "REPLAY-SESSION-SCOPED", "REPLAY-EVICTION"}

// note is a notification seen on a POST stream.
type note struct {
	stream string
	data   string
}

// replayMixesStreams records the notifications of every POST stream and
// puts those of the session's other POST streams in front of a resumed one.
func replayMixesStreams(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	notes := map[string][]note{} // by session
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		switch {
		case sid != "" && r.Method == http.MethodPost:
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					ev := servers.ParseEvent(raw)
					if m, ok := ev.Message(); ok && m.Method != "" && m.ID == nil && ev.Stream() != "" {
						mu.Lock()
						notes[sid] = append(notes[sid], note{ev.Stream(), ev.Data})
						mu.Unlock()
					}
					return raw
				}
			})
		case sid != "" && servers.IsPOSTResume(r):
			stream := servers.StreamOf(r.Header.Get(wire.HeaderLastEventID))
			first := true
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					if !first {
						return raw
					}
					first = false
					var out []byte
					mu.Lock()
					for _, n := range notes[sid] {
						if n.stream != stream {
							out = append(out, servers.MessageEvent(n.data)...)
						}
					}
					mu.Unlock()
					return append(out, raw...)
				}
			})
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// postStreamsWithoutIDs strips the ids (and the priming event) off every
// POST stream. With mix, it also records the notifications sent there and
// puts the session's recorded notifications at the head of a resumed
// standalone GET stream: a server that keeps one replay buffer per
// session for the GET stream and appends every notification to it,
// wherever it was sent.
func postStreamsWithoutIDs(mix bool) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		var mu sync.Mutex
		notes := map[string][]string{} // by session, with mix
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := r.Header.Get(wire.HeaderSessionID)
			switch {
			case r.Method == http.MethodPost:
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
					ew.OnEvent = func(raw []byte) []byte {
						ev := servers.ParseEvent(raw)
						m, ok := ev.Message()
						if !ok {
							return nil // the priming event
						}
						if mix && m.Method != "" && m.ID == nil && sid != "" {
							mu.Lock()
							notes[sid] = append(notes[sid], ev.Data)
							mu.Unlock()
						}
						return servers.MessageEvent(ev.Data)
					}
				})
			case mix && sid != "" && servers.IsStandaloneGET(r) && r.Header.Get(wire.HeaderLastEventID) != "":
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
					ew.OnStatus = func(code int, _ http.Header) int {
						if code == http.StatusOK {
							mu.Lock()
							var out []byte
							for _, n := range notes[sid] {
								out = append(out, servers.MessageEvent(n)...)
							}
							mu.Unlock()
							// Inject waits for the status to be written.
							go ew.Inject(out)
						}
						return code
					}
				})
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// lastIDFromStart points the Last-Event-ID of the GETs resumes selects at
// the first event of its stream.
func lastIDFromStart(resumes func(*http.Request) bool) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if resumes(r) {
				r.Header.Set(wire.HeaderLastEventID, servers.StreamOf(r.Header.Get(wire.HeaderLastEventID))+"_0")
			}
			next.ServeHTTP(w, r)
		})
	}
}

// resumeAfterCut holds a GET resuming a POST stream until the server has
// finished with the cut stream (its POST's handler returned), at most
// cutNoticed. The reference routes a cut call's next notifications to
// the standalone GET stream when it notices the cut first, and to the
// resumed stream when the resume comes first; REPLAY-GAP reaches a broken
// standalone replay only on the first path, which a resume sent within
// milliseconds of the cut could otherwise skip.
func resumeAfterCut(next http.Handler) http.Handler {
	var mu sync.Mutex
	open := map[string]chan struct{}{} // POST stream -> closed when its handler returns
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			var seen []string
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					if st := servers.ParseEvent(raw).Stream(); st != "" {
						mu.Lock()
						if _, ok := open[st]; !ok {
							open[st] = make(chan struct{})
							seen = append(seen, st)
						}
						mu.Unlock()
					}
					return raw
				}
			})
			mu.Lock()
			for _, st := range seen {
				close(open[st])
				delete(open, st)
			}
			mu.Unlock()
		case servers.IsPOSTResume(r):
			mu.Lock()
			done := open[servers.StreamOf(r.Header.Get(wire.HeaderLastEventID))]
			mu.Unlock()
			if done != nil {
				select {
				case <-done:
				case <-r.Context().Done():
				case <-time.After(cutNoticed):
				}
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// cutNoticed bounds how long resumeAfterCut holds a resume: a stream the
// server still serves after it (one the client did not cut) is resumed
// all the same.
const cutNoticed = time.Second

// replayCrossesSessions remembers which session each POST stream belongs to
// and serves a GET resuming one on that session, whatever session it names.
func replayCrossesSessions(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	owner := map[string]string{} // stream -> session
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		switch {
		case sid != "" && r.Method == http.MethodPost:
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					if s := servers.ParseEvent(raw).Stream(); s != "" {
						mu.Lock()
						owner[s] = sid
						mu.Unlock()
					}
					return raw
				}
			})
		case sid != "" && servers.IsPOSTResume(r):
			mu.Lock()
			o, ok := owner[servers.StreamOf(r.Header.Get(wire.HeaderLastEventID))]
			mu.Unlock()
			if ok {
				r.Header.Set(wire.HeaderSessionID, o)
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}
