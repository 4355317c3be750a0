package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/tools"
)

// subscriptions/listen (2026-07-28) opens a stream of the change
// notifications a client opted in to. The reference's tool, prompt and
// resource lists never change, so what it honours is resourceSubscriptions
// of tally:// resources: each step of tally_steps is a
// notifications/resources/updated on every listen stream of the principal
// that named the tally. A stream holds no state beyond its connection: a
// client whose stream was cut listens again, and only the new listen's id
// tags what follows. At shutdown every stream gets the listen's completion
// response before it closes.
const (
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// listenBuffer is how many notifications a stream may fall behind by;
	// a stream further behind is closed (an unexpected disconnect: its
	// client listens again).
	listenBuffer = 64
	// listenEndWait bounds how long shutdown waits for the streams to
	// write their completion responses.
	listenEndWait = time.Second
)

// listenFilter is subscriptions/listen's notifications parameter.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// honoured is the part of f the server agrees to: the tally resources.
func (f listenFilter) honoured() listenFilter {
	var out listenFilter
	for _, uri := range f.ResourceSubscriptions {
		if name, ok := strings.CutPrefix(uri, "tally://"); ok && tools.ValidTallyName(name) {
			out.ResourceSubscriptions = append(out.ResourceSubscriptions, uri)
		}
	}
	return out
}

// listener is one open listen stream.
type listener struct {
	principal string
	id        json.RawMessage
	uris      map[string]bool
	out       chan []byte   // encoded notifications to write
	lost      chan struct{} // closed when the stream fell too far behind
	lostOnce  sync.Once
}

// listenHub routes change notifications to the open listen streams.
type listenHub struct {
	mu      sync.Mutex
	streams map[*listener]struct{}
	ending  chan struct{} // closed at shutdown
	ended   bool
	wg      sync.WaitGroup // open streams
}

func newListenHub() *listenHub {
	return &listenHub{streams: map[*listener]struct{}{}, ending: make(chan struct{})}
}

// add registers l; false once the server is shutting down.
func (h *listenHub) add(l *listener) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return false
	}
	h.streams[l] = struct{}{}
	h.wg.Add(1)
	return true
}

func (h *listenHub) remove(l *listener) {
	h.mu.Lock()
	delete(h.streams, l)
	h.mu.Unlock()
	h.wg.Done()
}

// updated tells principal's streams that subscribed to uri that it changed.
func (h *listenHub) updated(principal, uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.streams {
		if l.principal != principal || !l.uris[uri] {
			continue
		}
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated",
			"params": map[string]any{"_meta": map[string]any{metaSubscriptionID: l.id}, "uri": uri}})
		select {
		case l.out <- msg:
		default:
			l.lostOnce.Do(func() { close(l.lost) })
		}
	}
}

// end makes every stream send its completion response and close, and
// waits (bounded) until they have.
func (h *listenHub) end() {
	h.mu.Lock()
	if !h.ended {
		h.ended = true
		close(h.ending)
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(listenEndWait):
	}
}

// listenRequest is a subscriptions/listen request.
type listenRequest struct {
	ID     json.RawMessage `json:"id"`
	Params struct {
		Notifications *listenFilter `json:"notifications"`
	} `json:"params"`
}

// serveListen answers subscriptions/listen with a stream that stays open
// until the client closes it or the server shuts down.
func (s *Server) serveListen(w http.ResponseWriter, r *http.Request, m modernRequest, principal string, body []byte) {
	if rerr := checkModernHeaders(r, m); rerr != nil {
		writeRPCErrorID(w, http.StatusBadRequest, rerr.Code, rerr.Message, rerr.Data, m.ID)
		return
	}
	var req listenRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Params.Notifications == nil {
		writeRPCErrorID(w, http.StatusBadRequest, CodeInvalidParams, "subscriptions/listen needs params.notifications, the notification types to receive", nil, m.ID)
		return
	}
	filter := req.Params.Notifications.honoured()
	l := &listener{principal: principal, id: m.ID, uris: map[string]bool{}, out: make(chan []byte, listenBuffer), lost: make(chan struct{})}
	for _, uri := range filter.ResourceSubscriptions {
		l.uris[uri] = true
	}
	if !s.modern.listens.add(l) {
		writeRPCErrorID(w, http.StatusServiceUnavailable, CodeInternalError, "Service Unavailable: the server is shutting down", nil, m.ID)
		return
	}
	defer s.modern.listens.remove(l)

	rc := http.NewResponseController(w)
	write := func(text string) error {
		_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := fmt.Fprint(w, text); err != nil {
			return err
		}
		return rc.Flush()
	}
	event := func(data []byte) error { return write("event: message\ndata: " + string(data) + "\n\n") }
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
		"params": map[string]any{"_meta": map[string]any{metaSubscriptionID: m.ID}, "notifications": filter}})
	if event(ack) != nil {
		return
	}
	var tick <-chan time.Time
	if s.cfg.SSEKeepAlive > 0 {
		t := s.cfg.Clock.NewTicker(s.cfg.SSEKeepAlive)
		defer t.Stop()
		tick = t.C()
	}
	for {
		select {
		case msg := <-l.out:
			if event(msg) != nil {
				return
			}
		case <-tick:
			if write(": keep-alive\n\n") != nil {
				return
			}
		case <-l.lost:
			s.log.Info("listen stream fell behind; closed", "principal", principal)
			return
		case <-r.Context().Done():
			return // the client closed it: the subscription ends
		case <-s.modern.listens.ending:
			done, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID,
				"result": map[string]any{"resultType": "complete", "_meta": map[string]any{metaSubscriptionID: m.ID}}})
			_ = event(done)
			return
		}
	}
}
