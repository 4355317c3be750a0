package storm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// Stream kinds: where a notification or event arrived.
const (
	KindPOST   = "post"        // the call's POST stream, before the cut
	KindGET    = "get"         // the standalone GET stream, before the cut
	KindResume = "post-resume" // a GET with the POST stream's Last-Event-ID
	KindNewGET = "new-get"     // a new standalone GET after the cut
)

// session is one storm session: its id, the call's request id and progress
// token, the last event id of each stream, and every notification seen.
type session struct {
	n     int
	id    string
	token string
	reqID json.RawMessage

	mu       sync.Mutex
	sentAt   time.Time // when the call was sent: no notification of it can be older
	postLast string    // last event id of the POST stream (its own or resumed)
	getLast  string    // last event id of the standalone stream
	notes    map[string][]string
	results  int
	failed   string // the call's answer was this error
	distinct int
	want     int  // distinct notifications expected
	needRes  bool // the result is expected (the strategy resumes the POST stream)
	reached  chan struct{}
	cutAfter int
	done     chan struct{} // closed once everything expected arrived
	errs     []string
	// after the cut: when each reconnecting stream kind answered and
	// delivered its first event
	headersAt map[string]time.Time
	firstAt   map[string]time.Time
}

// newSession is session n, complete once want distinct notifications and,
// if needRes, the call's result arrived: known from the start, so that a
// session with every notification before the cut is not taken for complete
// while its result is still to come from the resume.
func newSession(n, cutAfter, want int, needRes bool) *session {
	return &session{
		n: n, token: fmt.Sprintf("storm-%d", n), notes: map[string][]string{},
		want: want, needRes: needRes, cutAfter: cutAfter, reached: make(chan struct{}), done: make(chan struct{}),
		headersAt: map[string]time.Time{}, firstAt: map[string]time.Time{},
	}
}

func (s *session) errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 5 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

func (s *session) checkDone() {
	if s.distinct >= s.cutAfter || s.results > 0 {
		closeOnce(s.reached)
	}
	if s.distinct >= s.want && (!s.needRes || s.results > 0) {
		closeOnce(s.done)
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// event records one SSE event that arrived on a stream of kind.
func (s *session) event(kind string, ev sse.Event, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.HasID {
		switch kind {
		case KindPOST, KindResume:
			s.postLast = ev.ID
		default:
			s.getLast = ev.ID
		}
	}
	if kind == KindResume || kind == KindNewGET {
		if _, ok := s.firstAt[kind]; !ok {
			s.firstAt[kind] = time.Now()
		}
	}
	if len(bytes.TrimSpace([]byte(ev.Data))) == 0 {
		return // priming event or retry hint
	}
	var m wire.Message
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
		if len(s.errs) < 5 {
			s.errs = append(s.errs, fmt.Sprintf("%s stream: undecodable event %q", kind, ev.ID))
		}
		return
	}
	s.message(kind, m, method)
}

// message records a JSON-RPC message: the call's result, or a
// notification of the counted method carrying the session's token.
func (s *session) message(kind string, m wire.Message, method string) {
	switch {
	case m.IsResponse():
		if bytes.Equal(m.ID, s.reqID) {
			s.results++
			if m.Error != nil && s.failed == "" {
				s.failed = m.Error.Error()
			}
		}
	case m.Method == method:
		if method == "notifications/progress" {
			var p struct {
				Token any `json:"progressToken"`
			}
			if json.Unmarshal(m.Params, &p) != nil || fmt.Sprint(p.Token) != s.token {
				return
			}
		}
		key := string(m.Params)
		if len(s.notes[key]) == 0 {
			s.distinct++
		}
		s.notes[key] = append(s.notes[key], kind)
	}
	s.checkDone()
}

// read reads one stream until it ends or ctx ends; headers is when its
// answer's headers arrived.
func (s *session) read(ctx context.Context, kind string, resp *http.Response, method string) error {
	defer resp.Body.Close()
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	if !wire.IsSSE(resp) {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return err
		}
		return s.jsonBody(kind, body, method)
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		s.event(kind, ev, method)
	}
}

// jsonBody records the messages of a JSON answer (a server may answer a
// call with one instead of a stream).
func (s *session) jsonBody(kind string, body []byte, method string) error {
	msgs, err := (&wire.Response{Body: body}).Messages()
	if err != nil {
		return fmt.Errorf("undecodable answer: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		s.message(kind, m, method)
	}
	return nil
}

// lastIDs returns the last event id of the POST and the standalone stream.
func (s *session) lastIDs() (post, get string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.postLast, s.getLast
}

func (s *session) resultIn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.results > 0
}

func (s *session) markHeaders(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.headersAt[kind]; !ok {
		s.headersAt[kind] = time.Now()
	}
}
