package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that mishandle the messages of a call whose POST stream died.
func init() {
	servers.Register(
		servers.Fixture{
			Name:   "orphaned-notifications-dropped",
			About:  "notifications of a call whose POST stream died are lost instead of arriving on the GET stream",
			Breaks: []string{"REDIRECT-ORPHANED", "REPLAY-GAP", "EVT-REPLAY-POST", "RECREATE-INFLIGHT"},
			// Nothing reaches a GET stream, so where it goes cannot be seen.
			Skips: []string{"GET-LIVE-REPLACED"},
			Wrap:  orphanedNotificationsDropped,
		},
		servers.Fixture{
			Name:   "orphaned-response-on-get",
			About:  "the response of a call whose POST stream died is also sent on the standalone GET stream",
			Breaks: []string{"REDIRECT-NO-RESPONSE"},
			Wrap:   orphanedResponseOnGET,
		},
	)
}

// orphanedNotificationsDropped remembers the progress tokens of calls whose
// client left before the response and filters their notifications out of
// every GET stream of the session: the standalone one, where the reference
// redirects them, and a resumed POST stream, which holds the ones written
// before the reference noticed the client had gone. So they are lost
// whichever way the server routed them.
func orphanedNotificationsDropped(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	dropped := map[string]bool{} // session + token
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		m := servers.PeekRPC(r)
		switch {
		case sid != "" && r.Method == http.MethodGet:
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(raw []byte) []byte {
					if m, ok := servers.ParseEvent(raw).Message(); ok {
						if tok, ok := servers.ProgressToken(m); ok {
							mu.Lock()
							drop := dropped[sid+"\x00"+tok]
							mu.Unlock()
							if drop {
								return nil
							}
						}
					}
					return raw
				}
			})
		case sid != "" && m.Method == "tools/call" && m.ID != nil && m.Token != "":
			c := &followedCall{id: m.ID}
			drop := func() {
				if _, orphaned := c.orphaned(); orphaned {
					mu.Lock()
					dropped[sid+"\x00"+m.Token] = true
					mu.Unlock()
				}
			}
			// Mark as soon as the client is gone: the reference redirects
			// the very next notification. A resume can end the request first.
			stop := context.AfterFunc(r.Context(), drop)
			defer stop()
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) { ew.OnEvent = c.observe })
			drop()
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// responseOnGET resumes, in-process, the POST stream of a call whose client
// left, and copies the response it yields onto the session's standalone GET
// stream. A client resuming that POST stream takes it over.
type responseOnGET struct {
	next http.Handler
	gets *servers.GetStreams

	mu       sync.Mutex
	resuming map[string]*resumer      // by stream
	claimed  map[string]bool          // streams a client resumed: never resumed in-process
	noted    map[string]chan struct{} // by session and progress token: closed once a GET carried one
}

// resumer is an in-process GET resuming a POST stream.
type resumer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// resumeWait bounds an in-process resume, the wait for notifications on a GET included.
const resumeWait = time.Minute

func orphanedResponseOnGET(next http.Handler, _ server.Config) http.Handler {
	return &responseOnGET{next: next, gets: servers.NewGetStreams(), resuming: map[string]*resumer{}, claimed: map[string]bool{}, noted: map[string]chan struct{}{}}
}

func (x *responseOnGET) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(wire.HeaderSessionID)
	m := servers.PeekRPC(r)
	switch {
	case sid != "" && servers.IsStandaloneGET(r):
		ew := servers.NewEventWriter(w)
		ew.OnEvent = func(raw []byte) []byte {
			if m, ok := servers.ParseEvent(raw).Message(); ok {
				if tok, ok := servers.ProgressToken(m); ok {
					x.note(sid, tok)
				}
			}
			return raw
		}
		x.gets.Serve(x.next, ew, r)
	case sid != "" && servers.IsPOSTResume(r):
		x.handOver(servers.StreamOf(r.Header.Get(wire.HeaderLastEventID)))
		x.next.ServeHTTP(w, r)
	case sid != "" && m.Method == "tools/call" && m.ID != nil:
		c := &followedCall{id: m.ID}
		servers.ServeWith(x.next, w, r, func(ew *servers.EventWriter) { ew.OnEvent = c.observe })
		if last, orphaned := c.orphaned(); orphaned && last != "" {
			x.resume(sid, r.Header, last, m.ID, x.noteCh(sid, m.Token))
		}
	default:
		x.next.ServeHTTP(w, r)
	}
}

// handOver stops the in-process resumption of stream, if any, and waits
// until it has let go of the stream; none starts after.
func (x *responseOnGET) handOver(stream string) {
	x.mu.Lock()
	x.claimed[stream] = true
	res := x.resuming[stream]
	x.mu.Unlock()
	if res != nil {
		res.cancel()
		<-res.done
	}
}

// noteCh is closed once a standalone GET of sid carried a notification
// with progress token tok.
func (x *responseOnGET) noteCh(sid, tok string) chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	key := sid + "\x00" + tok
	ch := x.noted[key]
	if ch == nil {
		ch = make(chan struct{})
		x.noted[key] = ch
	}
	return ch
}

func (x *responseOnGET) note(sid, tok string) {
	ch := x.noteCh(sid, tok)
	x.mu.Lock()
	defer x.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// resume reads the POST stream after last in-process until it ends, and
// puts the call's response on the standalone stream. It starts once the
// client's standalone stream carries the call's notifications (noted): a
// resume before would take them (a resumed stream is the first that can
// carry them when no GET has), and lose them, which breaks other checks.
func (x *responseOnGET) resume(sid string, hdr http.Header, last string, id []byte, noted <-chan struct{}) {
	stream := servers.StreamOf(last)
	ctx, cancel := context.WithTimeout(context.Background(), resumeWait)
	res := &resumer{cancel: cancel, done: make(chan struct{})}
	x.mu.Lock()
	if x.claimed[stream] {
		x.mu.Unlock()
		cancel()
		return
	}
	x.resuming[stream] = res
	x.mu.Unlock()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
	for k, vs := range servers.ClientHeaders(hdr) {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", wire.AcceptGET)
	req.Header.Set(wire.HeaderSessionID, sid)
	req.Header.Set(wire.HeaderLastEventID, last)
	pr, pw := io.Pipe()
	go func() {
		select {
		case <-noted:
			x.next.ServeHTTP(&pipeWriter{h: http.Header{}, w: pw}, req)
		case <-ctx.Done():
		}
		pw.Close()
	}()
	go func() {
		defer func() {
			x.mu.Lock()
			if x.resuming[stream] == res {
				delete(x.resuming, stream)
			}
			x.mu.Unlock()
			cancel()
			close(res.done)
		}()
		rd := sse.NewReader(pr)
		for {
			ev, err := rd.Next()
			if err != nil {
				_, _ = io.Copy(io.Discard, pr) // until the handler returns
				return
			}
			var m wire.Message
			if json.Unmarshal([]byte(ev.Data), &m) == nil && m.IsResponse() && bytes.Equal(m.ID, id) {
				x.gets.Inject(sid, servers.MessageEvent(ev.Data))
			}
		}
	}()
}

// pipeWriter is the ResponseWriter of an in-process streaming request.
type pipeWriter struct {
	h http.Header
	w *io.PipeWriter
}

func (p *pipeWriter) Header() http.Header         { return p.h }
func (p *pipeWriter) WriteHeader(int)             {}
func (p *pipeWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeWriter) FlushError() error           { return nil }
