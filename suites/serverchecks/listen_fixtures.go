package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that get the sessionless revision's streams wrong: a call
// whose stream the client closed, and subscriptions/listen.
func init() {
	servers.Register(
		servers.Fixture{
			Name:         "close-not-cancel",
			About:        "closing a tools/call's response stream does not cancel the call: it runs on to its end",
			ModernBreaks: []string{"MODERN-CLOSE-CANCELS"},
			Wrap:         func(next http.Handler, _ server.Config) http.Handler { return detachCalls(next, nil) },
		},
		servers.Fixture{
			Name:         "orphans-to-listen",
			About:        "a tools/call whose response stream the client closed runs on, and what it sends goes to the principal's subscriptions/listen streams",
			ModernBreaks: []string{"MODERN-CLOSE-CANCELS", "MODERN-CLOSE-SILENT"},
			Wrap:         orphansToListen,
		},
		servers.Fixture{
			Name:         "listen-no-keepalive",
			About:        "a quiet subscriptions/listen stream gets no keep-alive comments",
			ModernBreaks: []string{"MODERN-KEEPALIVE"},
			Wrap: onListen(func(_ *http.Request, ev []byte, _ bool) []byte {
				if bytes.HasPrefix(ev, []byte(":")) {
					return nil
				}
				return ev
			}),
		},
		servers.Fixture{
			Name:         "listen-ack-untagged",
			About:        "the acknowledgement of subscriptions/listen lacks the subscription id in _meta",
			ModernBreaks: []string{"LISTEN-ACK-FIRST"},
			Wrap: onListen(func(_ *http.Request, ev []byte, first bool) []byte {
				if !first {
					return ev
				}
				return editMessage(ev, func(m map[string]any) {
					if p, ok := m["params"].(map[string]any); ok {
						delete(p, "_meta")
					}
				})
			}),
		},
		servers.Fixture{
			Name:         "listen-unfiltered",
			About:        "a change of a tally reaches every subscriptions/listen stream of the principal, also those that did not ask for it",
			ModernBreaks: []string{"LISTEN-ONLY-REQUESTED"},
			Wrap:         listenUnfiltered,
		},
		servers.Fixture{
			Name:         "listen-shared-tag",
			About:        "notifications on every subscriptions/listen stream of a principal are tagged with the id of its first listen, as if it had one subscription",
			ModernBreaks: []string{"LISTEN-TAGGED", "LISTEN-RENEW"},
			Wrap:         listenSharedTag,
		},
		servers.Fixture{
			Name:         "listen-abrupt-close",
			About:        "at shutdown a subscriptions/listen stream is closed without the listen's completion response",
			ModernBreaks: []string{"LISTEN-GRACEFUL-CLOSE"},
			Wrap: onListen(func(_ *http.Request, ev []byte, _ bool) []byte {
				if m, ok := servers.ParseEvent(ev).Message(); ok && m.IsResponse() {
					return nil
				}
				return ev
			}),
		},
	)
}

// isListen reports a sessionless subscriptions/listen request.
func isListen(r *http.Request) bool {
	b, ok := readModern(r)
	return isModern(r) && ok && b.method() == "subscriptions/listen"
}

// onListen passes each event of a subscriptions/listen stream through f
// (first: it is the stream's first event); nil drops it.
func onListen(f func(r *http.Request, ev []byte, first bool) []byte) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !isListen(r) {
				next.ServeHTTP(w, r)
				return
			}
			first := true
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(ev []byte) []byte {
					out := f(r, ev, first && servers.ParseEvent(ev).Data != "")
					if servers.ParseEvent(ev).Data != "" {
						first = false
					}
					return out
				}
			})
		})
	}
}

// editMessage rewrites the JSON-RPC message of an event.
func editMessage(ev []byte, edit func(m map[string]any)) []byte {
	var m map[string]any
	if json.Unmarshal([]byte(servers.ParseEvent(ev).Data), &m) != nil {
		return ev
	}
	edit(m)
	data, _ := json.Marshal(m)
	return servers.MessageEvent(string(data))
}

// listens are the open listen streams, by principal (Authorization).
type listens struct {
	mu      sync.Mutex
	streams map[string]map[*servers.EventWriter]*listenInfo
}

// listenInfo is what a listen asked for.
type listenInfo struct {
	id   json.RawMessage
	uris []string
}

// serve serves a listen request, registering its stream once the
// acknowledgement is out, with edit (nil: none) applied to its events.
func (l *listens) serve(next http.Handler, w http.ResponseWriter, r *http.Request, edit func(ev []byte) []byte) {
	who := r.Header.Get("Authorization")
	b, _ := readModern(r)
	info := &listenInfo{}
	info.id, _ = json.Marshal(b.raw["id"])
	if n, ok := b.params()["notifications"].(map[string]any); ok {
		subs, _ := n["resourceSubscriptions"].([]any)
		for _, s := range subs {
			if u, ok := s.(string); ok {
				info.uris = append(info.uris, u)
			}
		}
	}
	var ew *servers.EventWriter
	registered := false
	servers.ServeWith(next, w, r, func(w *servers.EventWriter) {
		ew = w
		w.OnEvent = func(ev []byte) []byte {
			if !registered && servers.ParseEvent(ev).Data != "" {
				registered = true
				l.mu.Lock()
				if l.streams == nil {
					l.streams = map[string]map[*servers.EventWriter]*listenInfo{}
				}
				if l.streams[who] == nil {
					l.streams[who] = map[*servers.EventWriter]*listenInfo{}
				}
				l.streams[who][w] = info
				l.mu.Unlock()
				return ev
			}
			if edit != nil {
				return edit(ev)
			}
			return ev
		}
	})
	l.mu.Lock()
	delete(l.streams[who], ew)
	l.mu.Unlock()
}

// of returns who's open listen streams.
func (l *listens) of(who string) map[*servers.EventWriter]*listenInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[*servers.EventWriter]*listenInfo{}
	for ew, info := range l.streams[who] {
		out[ew] = info
	}
	return out
}

// detached passes a handler's writes to the client's writer until the
// client leaves, then to gone (nil: nowhere); the handler never learns
// the client left.
type detached struct {
	w     http.ResponseWriter
	h     http.Header
	gone  func(p []byte)
	mu    sync.Mutex
	left  bool
	wrote bool
}

func (d *detached) Header() http.Header { return d.h }

func (d *detached) WriteHeader(code int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writeHeaderLocked(code)
}

func (d *detached) writeHeaderLocked(code int) {
	if d.left || d.wrote {
		return
	}
	d.wrote = true
	for k, vs := range d.h {
		d.w.Header()[k] = vs
	}
	d.w.WriteHeader(code)
}

func (d *detached) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left {
		if d.gone != nil {
			d.gone(p)
		}
		return len(p), nil
	}
	d.writeHeaderLocked(http.StatusOK)
	return d.w.Write(p)
}

func (d *detached) FlushError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left {
		return nil
	}
	return http.NewResponseController(d.w).Flush()
}

func (d *detached) Flush() { _ = d.FlushError() }

func (d *detached) SetWriteDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.left {
		return nil
	}
	return http.NewResponseController(d.w).SetWriteDeadline(t)
}

func (d *detached) leave() {
	d.mu.Lock()
	d.left = true
	d.mu.Unlock()
}

// detachCalls serves each sessionless tools/call on a context the
// client's leaving does not cancel; what the call writes after the client
// left goes to gone(r) (nil: nowhere).
func detachCalls(next http.Handler, gone func(r *http.Request) func([]byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := readModern(r)
		if !isModern(r) || !ok || b.method() != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		d := &detached{w: w, h: http.Header{}}
		if gone != nil {
			d.gone = gone(r)
		}
		rr := r.WithContext(context.WithoutCancel(r.Context()))
		setBody(rr, b) // read after this handler returns, when r.Body is gone
		done := make(chan struct{})
		go func() { defer close(done); next.ServeHTTP(d, rr) }()
		select {
		case <-done:
		case <-r.Context().Done():
			d.leave()
		}
	})
}

// orphansToListen runs cut calls on, and puts each event they send after
// the cut on the principal's open listen streams.
func orphansToListen(next http.Handler, _ server.Config) http.Handler {
	ls := &listens{}
	calls := detachCalls(next, func(r *http.Request) func([]byte) {
		who := r.Header.Get("Authorization")
		var pending []byte
		return func(p []byte) {
			pending = append(pending, p...)
			for {
				i := bytes.Index(pending, []byte("\n\n"))
				if i < 0 {
					return
				}
				ev := servers.ParseEvent(pending[:i+2])
				pending = pending[i+2:]
				if ev.Data == "" {
					continue
				}
				for ew := range ls.of(who) {
					ew.Inject(servers.MessageEvent(ev.Data))
				}
			}
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isListen(r) {
			ls.serve(next, w, r, nil)
			return
		}
		calls.ServeHTTP(w, r)
	})
}

// listenUnfiltered sends, after each tally_steps call, a
// resources/updated of its tally to every listen stream of the principal
// that did not subscribe to it (the reference sent it to those that did).
func listenUnfiltered(next http.Handler, _ server.Config) http.Handler {
	ls := &listens{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isListen(r) {
			ls.serve(next, w, r, nil)
			return
		}
		b, ok := readModern(r)
		next.ServeHTTP(w, r)
		if !isModern(r) || !ok || b.method() != "tools/call" || b.params()["name"] != "tally_steps" {
			return
		}
		args, _ := b.params()["arguments"].(map[string]any)
		tally, _ := args["tally"].(string)
		if tally == "" {
			return
		}
		uri := "tally://" + tally
		for ew, info := range ls.of(r.Header.Get("Authorization")) {
			if !strings.Contains(strings.Join(info.uris, "\n")+"\n", uri+"\n") {
				ew.Inject(servers.MessageEvent(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"` + subscriptionKey + `":` + string(info.id) + `},"uri":"` + uri + `"}}`))
			}
		}
	})
}

// subscriptionKey tags a listen stream's messages.
const subscriptionKey = "io.modelcontextprotocol/subscriptionId"

// listenSharedTag tags each notification on a principal's listen streams
// with the id of the first listen the principal opened.
func listenSharedTag(next http.Handler, _ server.Config) http.Handler {
	ls := &listens{}
	var mu sync.Mutex
	first := map[string]any{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isListen(r) {
			next.ServeHTTP(w, r)
			return
		}
		who := r.Header.Get("Authorization")
		b, _ := readModern(r)
		mu.Lock()
		if _, ok := first[who]; !ok {
			first[who] = b.raw["id"]
		}
		id := first[who]
		mu.Unlock()
		ls.serve(next, w, r, func(ev []byte) []byte {
			return editMessage(ev, func(m map[string]any) {
				p, _ := m["params"].(map[string]any)
				if meta, ok := p["_meta"].(map[string]any); ok && m["method"] != nil {
					if _, tagged := meta[subscriptionKey]; tagged {
						meta[subscriptionKey] = id
					}
				}
			})
		})
	})
}
