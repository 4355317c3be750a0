package serverchecks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// collector is a check's reader of an SSE stream (see sseReader), named
// for its messages and closed when the check ends.
type collector struct {
	*sseReader
	t    *kit.T
	name string
}

func (e *env) collect(name string, s *wire.Stream) *collector {
	c := &collector{sseReader: readSSE(s), t: e.T, name: name}
	e.Cleanup(func(context.Context) { c.Close() })
	return c
}

// Messages decodes the JSON-RPC messages among the events read so far.
func (c *collector) Messages() []wire.Message {
	return decode(c.t, c.Events())
}

// decode decodes the JSON-RPC messages among evs; data that is not one
// fails the check.
func decode(t *kit.T, evs []sse.Event) []wire.Message {
	var out []wire.Message
	for _, ev := range evs {
		if strings.TrimSpace(ev.Data) == "" {
			continue
		}
		var m wire.Message
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			t.Failf("SSE event %q carries data that is not a JSON-RPC message: %v", ev.ID, err)
		}
		out = append(out, m)
	}
	return out
}

// openGET opens the standalone GET stream (or resumes one with lastID) and
// fails the check unless it is an SSE stream.
func (e *env) openGET(ctx context.Context, c *wire.Client, sid, lastID string) *collector {
	s, err := e.get(ctx, c, sid, lastID)
	if se := new(wire.StatusError); errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed {
		e.Skip(report.NotOffered, "the target answers GET with 405: it offers no standalone stream")
	}
	if lastID == "" {
		e.OnPremise(catalogue.PremiseGETStream, func() { e.Expect(err).NotTo(HaveOccurred(), "GET stream") })
	}
	e.Expect(err).NotTo(HaveOccurred(), "GET stream (Last-Event-ID %q)", lastID)
	name := "GET"
	if lastID != "" {
		name = "GET after " + lastID
	}
	return e.collect(name, s)
}

// get opens a GET stream. Right after a cut, a server that allows one
// stream per id may not have noticed the old one is gone and answer 409;
// a client would retry, and so does get, for a while. (GET-STALE-REPLACED
// is the check that says this should not be needed.)
func (e *env) get(ctx context.Context, c *wire.Client, sid, lastID string) (*wire.Stream, error) {
	s, err := c.OpenGET(ctx, sid, lastID)
	for end := time.Now().Add(conflictRetry); isStatus(err, http.StatusConflict) && time.Now().Before(end); {
		e.Logf("GET got 409; retrying while the server notices the old stream is gone")
		e.Pause(50 * time.Millisecond)
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

// connect runs the initialize handshake, watches the session (see watch)
// and deletes it at the end of the check. Against a stateless target it
// returns "": the handshake still runs, and no session follows from it.
func (e *env) connect(ctx context.Context, c *wire.Client) string {
	began := time.Now()
	sid, err := c.Connect(ctx)
	if ie := new(wire.InitializedError); errors.As(err, &ie) && gone(ie.Response) {
		// Gone between the two steps of the handshake: what the check is
		// about never started. The server saw a silence of at most the
		// time from the initialize to the notification; if the harness's
		// own delay made that as long as the target may let a session
		// live silent, the expiry is no defect.
		silent := ie.Sent.Sub(began).Round(10 * time.Millisecond)
		if lives := e.silentLife(); lives > 0 && silent >= lives {
			e.Inconclusivef("the harness's own handshake left its session silent for up to %v (from its initialize to its notifications/initialized, delayed on this machine), "+
				"at least the %v (idle threshold + grace period) after which the target may expire it; its notifications/initialized got %d", silent, lives, ie.Response.Status)
		}
		e.Expect(err).NotTo(HaveOccurred(), fmt.Sprintf(SessionLost+": its notifications/initialized got %d %v after its initialize began", ie.Response.Status, time.Since(began).Round(100*time.Millisecond)))
	}
	if err != nil && ctx.Err() != nil {
		// The check's own deadline ran out in the harness's setup (a busy
		// machine): what the check is about was never observed.
		e.Inconclusivef("the check's deadline passed during the harness's own initialize handshake, %v after it began (%v)", time.Since(began).Round(10*time.Millisecond), err)
	}
	if ie := new(wire.InitializedError); errors.As(err, &ie) {
		e.OnPremise(catalogue.PremiseHandshake, func() { e.Expect(err).NotTo(HaveOccurred(), "initialize handshake") })
	}
	e.Expect(err).NotTo(HaveOccurred(), "initialize handshake")
	if sid == "" && e.stateless() {
		return "" // nothing to keep warm or delete: requests go without a session id
	}
	e.Expect(sid).NotTo(BeEmpty(), "Mcp-Session-Id on the InitializeResult")
	e.Cleanup(func(ctx context.Context) {
		if !e.ended(sid) { // a session the check ended itself is gone already
			_, _ = c.Delete(ctx, sid)
		}
	})
	e.watch(c, sid)
	return sid
}

// silentLife is how long the target declares a silent session may live
// (idle threshold + grace period); 0 when it declares no idle threshold.
func (e *env) silentLife() time.Duration {
	t := e.Config.Timings
	if t.IdleThreshold <= 0 {
		return 0
	}
	return t.IdleThreshold.D() + t.GracePeriod.D()
}
