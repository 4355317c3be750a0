package serverchecks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures whose SSE streams carry the wrong things, or close wrongly.
func init() {
	servers.Register(
		servers.Fixture{
			Name: "retry-before-priming",
			About: "every SSE stream starts with a bare retry field (`retry: 500`, nothing else) before the reference's priming event, " +
				"as a server that sets the reconnection delay first writes it: it breaks nothing",
			Wrap: retryBeforePriming,
		},
		servers.Fixture{
			Name:   "get-stream-202",
			About:  "GET streams are answered 202 Accepted instead of 200 OK (the stream itself works)",
			Breaks: []string{"GET-SSE-OR-405", "GET-STALE-REPLACED"},
			Wrap:   getStream202,
		},
		servers.Fixture{
			Name:     "get-refused-400",
			About:    "a GET for the standalone stream is refused with 400 Bad Request, not 405, so no check that watches it can",
			Breaks:   []string{"GET-SSE-OR-405"},
			Premises: []catalogue.Premise{catalogue.PremiseGETStream},
			Wrap:     getRefused400,
		},
		servers.Fixture{
			Name:   "responses-copied-to-get",
			About:  "every response sent on a POST stream is also sent on the session's standalone GET stream",
			Breaks: []string{"GET-NO-RESPONSES", "MSG-ONE-STREAM"},
			Wrap:   copyToGET(wire.Message.IsResponse),
		},
		servers.Fixture{
			Name:   "notifications-to-every-session",
			About:  "every notification a call sends is also sent on the standalone GET stream of every other session: one user sees another's progress",
			Breaks: []string{"MSG-SESSION-ISOLATED"},
			Wrap:   copyToOtherSessions(func(m wire.Message) bool { return m.Method != "" && m.ID == nil }),
		},
		servers.Fixture{
			Name:   "responses-to-every-session",
			About:  "every response is also sent on the standalone GET stream of every other session: one user's results reach another",
			Breaks: []string{"MSG-SESSION-ISOLATED"},
			Wrap:   copyToOtherSessions(wire.Message.IsResponse),
		},
		servers.Fixture{
			Name:         "progress-repeats-last",
			About:        "a call's last progress notification is sent twice, on the same stream (progress 1 2 3 4 5 5)",
			Breaks:       []string{"PROGRESS-INCREASES"},
			ModernBreaks: []string{"PROGRESS-INCREASES"},
			Premises:     []catalogue.Premise{catalogue.PremiseProgress},
			Wrap:         progressRepeatsLast,
		},
		servers.Fixture{
			Name:   "first-note-on-get",
			About:  "a call's first progress notification goes to the standalone GET stream, while the call's POST stream is connected; the rest go on the POST stream",
			Breaks: []string{"GET-UNRELATED"},
			Wrap:   firstNoteOnGET,
		},
		servers.Fixture{
			Name:   "notifications-broadcast",
			About:  "notifications sent on a POST stream are also sent on the session's standalone GET stream",
			Breaks: []string{"GET-UNRELATED", "MSG-ONE-STREAM", "REDIRECT-ORPHANED", "RECREATE-INFLIGHT"},
			Wrap:   copyToGET(func(m wire.Message) bool { return m.Method != "" && m.ID == nil }),
		},
		servers.Fixture{
			Name:   "post-priming-id-reused",
			About:  "every POST stream's priming event has the id _0, which the standalone stream uses too",
			Breaks: []string{"EVT-ID-UNIQUE"},
			Wrap:   postPrimingID,
		},
		servers.Fixture{
			Name:   "priming-ids-raced",
			About:  "each call's POST stream is primed with an id from a counter read when the call arrives and written back a moment later: calls that arrive together share their priming id",
			Breaks: []string{"EVT-ID-UNIQUE"},
			Wrap:   primingIDsRaced,
		},
		servers.Fixture{
			Name:   "post-streams-unprimed",
			About:  "POST streams start straight with messages: no priming event",
			Breaks: []string{"SSE-PRIMING"},
			Wrap:   unprimedPOSTs,
		},
		servers.Fixture{
			Name:   "get-streams-unprimed",
			About:  "standalone GET streams start with a comment, no priming event (as the Go SDK's do); POST streams are primed",
			Breaks: []string{"GET-PRIMED"},
			Wrap:   unprimedGETs,
		},
		servers.Fixture{
			Name:   "retry-stripped",
			About:  "a GET stream the server closes on purpose ends without a retry field",
			Breaks: []string{"SSE-RETRY-FIELD"},
			Wrap:   retryStripped,
		},
		servers.Fixture{
			Name:   "conflict-second-get",
			About:  "a second GET stream for a session gets 409 while the first is registered, as stock SDKs do",
			Breaks: []string{"GET-STALE-REPLACED", "GET-LIVE-REPLACED", "SSE-RETRY-FIELD"},
			Wrap:   conflictSecondGET,
		},
		servers.Fixture{
			Name:   "replaced-get-held-open",
			About:  "a replaced GET stream gets its retry field but its connection is never closed",
			Breaks: []string{"GET-LIVE-REPLACED", "SSE-RETRY-FIELD"},
			Wrap:   replacedGETHeldOpen,
		},
		servers.Fixture{
			Name:   "replacement-get-deaf",
			About:  "a GET stream that replaced a connected one is accepted and the old one closed, but the old one's end unregistered the session's stream: the notifications of calls started after that reach neither (trpc-mcp-go 0.0.20 loses every later message so)",
			Breaks: []string{"GET-LIVE-REPLACED"},
			Wrap:   replacementGETDeaf,
		},
		servers.Fixture{
			Name:   "disconnect-cancels",
			About:  "a call whose POST stream drops is cancelled, unless the client had opened a GET stream before making it",
			Breaks: []string{"DISCONNECT-NOT-CANCEL", "EVT-REPLAY-POST", "REPLAY-GAP"},
			Wrap:   disconnectCancels(false),
		},
		servers.Fixture{
			Name:  "cut-cancels-calls",
			About: "a call whose POST stream drops is cancelled the moment the server sees the connection gone, GET stream or not",
			// RECREATE-INFLIGHT stands on the premise too, but whether its
			// refresh is seen before its resume takes the call over (and
			// the call is cancelled) is a race: it comes out blocked or
			// passes, and the matrix allows either.
			Breaks:   []string{"DISCONNECT-NOT-CANCEL", "EVT-REPLAY-POST", "REPLAY-GAP", "REDIRECT-ORPHANED"},
			Premises: []catalogue.Premise{catalogue.PremiseSurvivesCut},
			Wrap:     disconnectCancels(true),
		},
		servers.Fixture{
			Name:      "cut-notes-parked",
			About:     "once the server has noticed that a call's POST stream was cut, and no GET stream is connected, it parks the call's notifications for the standalone stream until the POST stream is resumed: resumed at once it misses nothing, resumed later it misses them",
			Breaks:    []string{"EVT-REPLAY-POST"},
			Configure: func(c *server.Config) { c.ParkCutNotes = true },
		},
	)
}

// getRefused400 answers every GET 400, as a server that checks a header
// it should not (mcp-lite 0.10 refuses a GET whose MCP-Protocol-Version is
// not 2025-06-18, the revision it negotiated included).
func getRefused400(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Error(w, "Bad Request: Protocol version mismatch", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func getStream202(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				if code == http.StatusOK && h.Get("Content-Type") == wire.MediaTypeSSE {
					return http.StatusAccepted
				}
				return code
			}
		})
	})
}

// copyToGET copies the messages of POST streams that copied selects onto
// the session's standalone GET stream, without an event id.
func copyToGET(copied func(wire.Message) bool) func(http.Handler, server.Config) http.Handler {
	return withGET(func(sid string, gets *servers.GetStreams) func([]byte) []byte {
		return func(raw []byte) []byte {
			ev := servers.ParseEvent(raw)
			if m, ok := ev.Message(); ok && copied(m) {
				gets.Inject(sid, servers.MessageEvent(ev.Data))
			}
			return raw
		}
	})
}

// copyToOtherSessions sends each message copied selects, as it goes on
// a POST stream of one session, on the standalone GET stream of every
// other session too.
func copyToOtherSessions(copied func(wire.Message) bool) func(http.Handler, server.Config) http.Handler {
	return withGET(func(sid string, gets *servers.GetStreams) func([]byte) []byte {
		return func(raw []byte) []byte {
			ev := servers.ParseEvent(raw)
			if m, ok := ev.Message(); ok && copied(m) {
				gets.InjectOthers(sid, servers.MessageEvent(ev.Data))
			}
			return raw
		}
	})
}

// withGET serves each session's standalone GET stream through gets, and
// the events of every POST request through the filter that per makes for
// it, which may inject events on the session's GET stream.
func withGET(per func(sid string, gets *servers.GetStreams) func([]byte) []byte) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		gets := servers.NewGetStreams()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := r.Header.Get(wire.HeaderSessionID)
			switch {
			case sid == "":
				next.ServeHTTP(w, r)
			case servers.IsStandaloneGET(r):
				gets.Serve(next, servers.NewEventWriter(w), r)
			case r.Method == http.MethodPost:
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) { ew.OnEvent = per(sid, gets) })
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// firstNoteOnGET moves each call's first progress notification from its
// POST stream to the session's standalone GET stream, when one is open:
// nothing is lost, but a live request's notification travels unrelated.
var firstNoteOnGET = withGET(func(sid string, gets *servers.GetStreams) func([]byte) []byte {
	moved := false
	return func(raw []byte) []byte {
		ev := servers.ParseEvent(raw)
		if m, ok := ev.Message(); ok && m.Method == "notifications/progress" && !moved && gets.Inject(sid, servers.MessageEvent(ev.Data)) {
			moved = true
			return nil
		}
		return raw
	}
})

var idLine = regexp.MustCompile(`(?m)^id: .*$`)

func postPrimingID(next http.Handler, _ server.Config) http.Handler {
	return onPOSTEvents(next, func(raw []byte) []byte {
		if ev := servers.ParseEvent(raw); ev.HasID && ev.Data == "" {
			return idLine.ReplaceAll(raw, []byte("id: _0"))
		}
		return raw
	})
}

// primingIDsRaced numbers the priming event of each tools/call's POST
// stream from a counter it reads when the request arrives and writes back
// only raceWindow later, as a server whose counter lives in a store one
// round trip away: calls sent one after another get ids of their own,
// calls sent together the same one.
func primingIDsRaced(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	counter := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || servers.PeekRPC(r).Method != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		n := counter
		mu.Unlock()
		select {
		case <-time.After(raceWindow):
		case <-r.Context().Done():
			return
		}
		mu.Lock()
		counter = max(counter, n+1)
		mu.Unlock()
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(raw []byte) []byte {
				if ev := servers.ParseEvent(raw); ev.HasID && ev.Data == "" {
					return idLine.ReplaceAll(raw, []byte(fmt.Sprintf("id: call-%d", n)))
				}
				return raw
			}
		})
	})
}

// raceWindow is how long primingIDsRaced takes to write its counter back.
const raceWindow = 250 * time.Millisecond

func unprimedPOSTs(next http.Handler, _ server.Config) http.Handler {
	return onPOSTEvents(next, func(raw []byte) []byte {
		if ev := servers.ParseEvent(raw); ev.HasID && ev.Data == "" {
			return nil
		}
		return raw
	})
}

// unprimedGETs drops the priming event of every standalone GET stream, so
// it opens with the reference's ": ok" comment.
func unprimedGETs(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !servers.IsStandaloneGET(r) {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(raw []byte) []byte {
				if ev := servers.ParseEvent(raw); ev.HasID && ev.Data == "" {
					return nil
				}
				return raw
			}
		})
	})
}

// onPOSTEvents passes the events of every POST stream through f.
func onPOSTEvents(next http.Handler, f func([]byte) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) { ew.OnEvent = f })
	})
}

var retryLine = regexp.MustCompile(`(?m)^retry:.*\n`)

func retryStripped(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(raw []byte) []byte {
				if !servers.ParseEvent(raw).Retry {
					return raw
				}
				if rest := retryLine.ReplaceAll(raw, nil); len(bytes.TrimSpace(rest)) > 0 {
					return rest
				}
				return nil
			}
		})
	})
}

// retryBeforePriming writes a block of a retry field alone ahead of each
// SSE answer's first event.
func retryBeforePriming(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			first := true
			ew.OnEvent = func(raw []byte) []byte {
				if !first {
					return raw
				}
				first = false
				return append([]byte("retry: 500\n\n"), raw...)
			}
		})
	})
}

// conflictSecondGET answers 409 to a GET without Last-Event-ID while the
// session's previous GET request is still being served.
func conflictSecondGET(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	open := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		if r.Method != http.MethodGet || sid == "" || r.Header.Get(wire.HeaderLastEventID) != "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		busy := open[sid]
		open[sid] = true
		mu.Unlock()
		if busy {
			writeError(w, http.StatusConflict, "Conflict: only one SSE stream is allowed per session")
			return
		}
		defer func() {
			mu.Lock()
			delete(open, sid)
			mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// holdOpen bounds how long a closed GET stream's connection is kept.
const holdOpen = time.Minute

// replacedGETHeldOpen keeps the connection of a standalone GET stream the
// reference has ended (replaced, or its session gone) until the client
// leaves: the client never learns the stream is over.
func replacedGETHeldOpen(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get(wire.HeaderLastEventID) != "" {
			next.ServeHTTP(w, r)
			return
		}
		ew := servers.NewEventWriter(w)
		next.ServeHTTP(ew, r)
		if !ew.Streaming() {
			return
		}
		t := time.NewTimer(holdOpen)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
	})
}

// replacementGETDeaf drops, from a standalone GET stream whose
// predecessor the server ended (not its client), the progress
// notifications of every call the session starts after that: the
// session's stream registration went with the old one. Calls already
// running keep their way to the stream (so a refresh, whose new GET can
// reach the server before it noticed the cut, changes nothing for them).
func replacementGETDeaf(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	newest := map[string]*atomic.Bool{} // session -> whether its newest GET replaced one
	late := map[string]bool{}           // progress tokens of calls started after a replacement
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		switch {
		case sid == "":
			next.ServeHTTP(w, r)
		case !servers.IsStandaloneGET(r):
			if m := servers.PeekRPC(r); m.Method == "tools/call" && m.Token != "" {
				mu.Lock()
				if d := newest[sid]; d != nil && d.Load() {
					late[m.Token] = true
				}
				mu.Unlock()
			}
			next.ServeHTTP(w, r)
		default:
			deaf := new(atomic.Bool)
			mu.Lock()
			newest[sid] = deaf
			mu.Unlock()
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					m, ok := servers.ParseEvent(raw).Message()
					if tok, isProgress := servers.ProgressToken(m); ok && isProgress && deaf.Load() {
						mu.Lock()
						drop := late[tok]
						mu.Unlock()
						if drop {
							return nil
						}
					}
					return raw
				}
			})
			mu.Lock()
			defer mu.Unlock()
			if n := newest[sid]; n != deaf && r.Context().Err() == nil {
				n.Store(true) // replaced, and ended by the server
			}
		}
	})
}

// disconnectCancels cancels a tools/call in-process, as the client would
// with notifications/cancelled, when its POST stream drops before the
// response and the session had no standalone GET stream before the call
// (decided when the call starts, so a GET racing the cut changes nothing).
// With always, GET stream or not, and at once when the connection is seen
// gone.
func disconnectCancels(always bool) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		gets := servers.NewGetStreams()
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sid := r.Header.Get(wire.HeaderSessionID)
			m := servers.PeekRPC(r)
			switch {
			case sid != "" && servers.IsStandaloneGET(r):
				gets.Serve(next, servers.NewEventWriter(w), r)
			case sid != "" && m.Method == "tools/call" && m.ID != nil:
				listening := gets.HadGET(sid)
				c := &followedCall{id: m.ID}
				cancel := func() {
					servers.InProcess(next, http.MethodPost, sid, r.Header,
						`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+string(m.ID)+`,"reason":"client disconnected"}}`)
				}
				served := make(chan struct{})
				if always {
					// At once, the moment the client's connection is seen gone:
					// before a resume could take the call over.
					go func() {
						select {
						case <-r.Context().Done():
							if _, orphaned := c.orphaned(); orphaned {
								cancel()
							}
						case <-served:
						}
					}()
				}
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) { ew.OnEvent = c.observe })
				close(served)
				// Ended without its response (a resume took the call over
				// before the cut was seen): cancelled too.
				if _, orphaned := c.orphaned(); orphaned && (always || !listening) {
					cancel()
				}
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// writeError writes a JSON-RPC error answer with id null.
func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", wire.MediaTypeJSON)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"` + message + `"},"id":null}`))
}

// followedCall follows a request's POST stream: the last event id written and
// whether its response got out.
type followedCall struct {
	id       []byte
	mu       sync.Mutex
	lastID   string
	answered bool
}

// observe is an event function that records and passes every event.
func (c *followedCall) observe(raw []byte) []byte {
	ev := servers.ParseEvent(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.ID != "" {
		c.lastID = ev.ID
	}
	if m, ok := ev.Message(); ok && m.IsResponse() && bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(c.id)) {
		c.answered = true
	}
	return raw
}

// orphaned reports whether the request's client left, or its request ended,
// before the response, and the last event id it was sent. The request can
// end before the client is seen to leave: a resume of its stream ends it.
func (c *followedCall) orphaned() (lastID string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastID, !c.answered
}

// progressRepeatsLast sends each progress notification whose progress
// has reached its total a second time, right after it, on the same stream.
func progressRepeatsLast(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnEvent = func(raw []byte) []byte {
				ev := servers.ParseEvent(raw)
				m, ok := ev.Message()
				if !ok || m.Method != "notifications/progress" {
					return raw
				}
				var p struct{ Progress, Total float64 }
				if json.Unmarshal(m.Params, &p) == nil && p.Total > 0 && p.Progress == p.Total {
					return append(slices.Clone(raw), servers.MessageEvent(ev.Data)...)
				}
				return raw
			}
		})
	})
}
