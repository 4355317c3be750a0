package suites

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// collector reads an SSE stream in the background, so a check can wait on
// what arrived with Eventually and still see a stream that never ends.
type collector struct {
	name   string
	s      *wire.Stream
	mu     sync.Mutex
	events []sse.Event
	err    error
	done   chan struct{}
}

func collect(name string, s *wire.Stream) *collector {
	c := &collector{name: name, s: s, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			ev, err := s.Next()
			c.mu.Lock()
			if err != nil {
				c.err = err
				c.mu.Unlock()
				return
			}
			c.events = append(c.events, ev)
			c.mu.Unlock()
		}
	}()
	DeferCleanup(c.Close)
	return c
}

// Close closes the stream's connection and waits for the reader.
func (c *collector) Close() {
	c.s.Close()
	<-c.done
}

// Events returns the events read so far.
func (c *collector) Events() []sse.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sse.Event(nil), c.events...)
}

// Ended reports whether the stream ended (EOF or a read error).
func (c *collector) Ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// LastID returns the id of the last event that carried one.
func (c *collector) LastID() string {
	evs := c.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].ID != "" {
			return evs[i].ID
		}
	}
	return ""
}

// Messages decodes the JSON-RPC messages among the events read so far.
func (c *collector) Messages() []wire.Message {
	return decode(c.Events())
}

func decode(evs []sse.Event) []wire.Message {
	var out []wire.Message
	for _, ev := range evs {
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		var m wire.Message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			Fail(fmt.Sprintf("SSE event %q carries data that is not a JSON-RPC message: %v", ev.ID, err))
		}
		out = append(out, m)
	}
	return out
}

// openGET opens the standalone GET stream (or resumes one with lastID) and
// fails the check unless it is an SSE stream.
func (e *Env) openGET(ctx context.Context, c *wire.Client, sid, lastID string) *collector {
	s, err := e.get(ctx, c, sid, lastID)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
		Skip("the target answers GET with 405: it offers no standalone stream")
	}
	Expect(err).NotTo(HaveOccurred(), "GET stream (Last-Event-ID %q)", lastID)
	name := "GET"
	if lastID != "" {
		name = "GET after " + lastID
	}
	return collect(name, s)
}

// get opens a GET stream. Right after a cut, a server that allows one
// stream per id may not have noticed the old one is gone and answer 409;
// a client would retry, and so does get, for a while. (GET-STALE-REPLACED
// is the check that says this should not be needed.)
func (e *Env) get(ctx context.Context, c *wire.Client, sid, lastID string) (*wire.Stream, error) {
	s, err := c.OpenGET(ctx, sid, lastID)
	for end := time.Now().Add(conflictRetry); isStatus(err, http.StatusConflict) && time.Now().Before(end); {
		e.Logf("GET got 409; retrying while the server notices the old stream is gone")
		pause(ctx, 50*time.Millisecond)
		s, err = c.OpenGET(ctx, sid, lastID)
	}
	return s, err
}

// conflictRetry bounds how long openGET retries a 409.
const conflictRetry = 3 * time.Second

func isStatus(err error, status int) bool {
	se := new(wire.StatusError)
	return errors.As(err, &se) && se.Status == status
}

// connect runs the initialize handshake and deletes the session at the end
// of the check.
func (e *Env) connect(ctx context.Context, c *wire.Client) string {
	sid, err := c.Connect(ctx)
	Expect(err).NotTo(HaveOccurred(), "initialize handshake")
	Expect(sid).NotTo(BeEmpty(), "Mcp-Session-Id on the InitializeResult")
	DeferCleanup(func(ctx SpecContext) { _, _ = c.Delete(ctx, sid) })
	return sid
}

// call is a tools/call of the profile's notifying tool on its own POST stream.
type call struct {
	token string
	id    string // the request's JSON-RPC id as JSON text
	post  *collector
}

// startNotifying calls the notifying tool with a progress token and returns
// while its POST stream is open.
func (e *Env) startNotifying(ctx context.Context, c *wire.Client, sid, token string) *call {
	t := e.Config.Tools.Notifying
	body := c.Request("tools/call", wire.ToolParams(t.Name, t.Arguments, token))
	id, _ := json.Marshal(body["id"])
	req, err := c.NewHTTPRequest(ctx, http.MethodPost, sid, body)
	Expect(err).NotTo(HaveOccurred())
	s, err := c.Open(req)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusOK {
		Skip("the target answered tools/call with a JSON body, not an SSE stream; this check needs the response streamed")
	}
	Expect(err).NotTo(HaveOccurred(), "tools/call %s", t.Name)
	return &call{token: token, id: string(id), post: collect("POST "+t.Name, s)}
}

// isNote reports whether m is one of the call's counted notifications.
func (e *Env) isNote(m wire.Message, k *call) bool {
	method := e.Config.Tools.Notifying.Method
	if m.Method != method {
		return false
	}
	if method != "notifications/progress" {
		return true
	}
	var p struct {
		Token any `json:"progressToken"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return fmt.Sprint(p.Token) == k.token
}

// notes returns the params of the call's notifications among msgs.
func (e *Env) notes(msgs []wire.Message, k *call) []string {
	var out []string
	for _, m := range msgs {
		if e.isNote(m, k) {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// isResponse reports whether m is the call's response.
func (k *call) isResponse(m wire.Message) bool {
	return m.IsResponse() && string(m.ID) == k.id
}

// response returns the call's response among msgs, if any.
func (k *call) response(msgs []wire.Message) (wire.Message, bool) {
	for _, m := range msgs {
		if k.isResponse(m) {
			return m, true
		}
	}
	return wire.Message{}, false
}

// expectSequence checks that parts, read in order from successive streams,
// form the call's whole notification sequence: every one once, in order.
func (e *Env) expectSequence(parts ...[]string) {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	seen := map[string]int{}
	for i, n := range all {
		if j, dup := seen[n]; dup {
			Fail(fmt.Sprintf("notification delivered twice (positions %d and %d): %s", j+1, i+1, n))
		}
		seen[n] = i
	}
	want := e.Config.Tools.Notifying.Notifications
	Expect(all).To(HaveLen(want), "every notification of the call exactly once (got %d of %d)", len(all), want)
	if e.Config.Tools.Notifying.Method == "notifications/progress" {
		last := -1.0
		for _, n := range all {
			var p struct{ Progress float64 }
			_ = json.Unmarshal([]byte(n), &p)
			Expect(p.Progress).To(BeNumerically(">", last), "progress notifications in order: %v", all)
			last = p.Progress
		}
	}
}

// expectOnce checks that parts, read from different streams, hold the
// call's notifications exactly once between them (order across streams is
// not defined).
func (e *Env) expectOnce(parts ...[]string) {
	seen := map[string]bool{}
	n := 0
	for _, p := range parts {
		for _, note := range p {
			Expect(seen).NotTo(HaveKey(note), "notification delivered on more than one stream, or twice: %s", note)
			seen[note] = true
			n++
		}
	}
	want := e.Config.Tools.Notifying.Notifications
	Expect(n).To(Equal(want), "every notification of the call exactly once (got %d of %d)", n, want)
}
