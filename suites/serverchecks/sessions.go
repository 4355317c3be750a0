package serverchecks

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// entropySessions is how many sessions SESS-ID-ENTROPY opens, and
// minEntropySessions how many it judges at least, when slow handshakes
// leave its deadline no room for all of them.
const (
	entropySessions    = 16
	minEntropySessions = 4
)

// sessionChecks are the sessions checks.
func sessionChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "SESS-ID-CHARS", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions,
			Summary: "The Mcp-Session-Id on the InitializeResult has only visible ASCII (0x21-0x7E)."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				for i, r := range []byte(sid) {
					e.Expect(r >= 0x21 && r <= 0x7e).To(BeTrue(), "byte %d of session id %q is 0x%02x, outside 0x21-0x7E", i, sid, r)
				}
			}},

		{Entry: catalogue.Entry{ID: "SESS-ID-ENTROPY", Level: catalogue.Should, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions,
			Summary: "Session ids are unique and unguessable (at least 128 bits by length and alphabet)."},
			body: func(ctx context.Context, e *env) {
				seen := map[string]bool{}
				var slowest time.Duration
				for i := range entropySessions {
					// A server that starts a process per session (a bridge in
					// front of a stdio server) takes a second or more per
					// handshake: past the first few ids, stop when the deadline
					// leaves no room for another, and judge the ids observed.
					if dl, ok := ctx.Deadline(); ok && i >= minEntropySessions && time.Until(dl) < 2*slowest {
						e.Logf("%d session ids observed; the check's deadline leaves no room for more handshakes of up to %v each: judged on these", i, slowest.Round(10*time.Millisecond))
						break
					}
					began := time.Now()
					sid := e.connect(ctx, e.C)
					slowest = max(slowest, time.Since(began))
					e.Expect(seen).NotTo(HaveKey(sid), "session ids must be unique")
					seen[sid] = true
					e.Expect(idBits(sid)).To(BeNumerically(">=", 128), "session id %q carries about %.0f bits by length and alphabet; want >= 128", sid, idBits(sid))
					// Ended at once: the target holds one of the check's
					// sessions at a time, not sixteen kept warm.
					e.end(sid)
					if _, err := e.C.Delete(ctx, sid); err != nil {
						e.Logf("DELETE of session %q: %v", sid, err)
					}
				}
			}},

		{Entry: catalogue.Entry{ID: "SESS-MISSING-400", Level: catalogue.Should, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions,
			Summary: "A non-initialize request without a session id gets 400."},
			body: func(ctx context.Context, e *env) {
				e.connect(ctx, e.C)
				resp, err := e.C.Call(ctx, "", "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusBadRequest), "tools/list without Mcp-Session-Id")
			}},

		{Entry: catalogue.Entry{ID: "SESS-UNKNOWN-404", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions,
			Summary: "POST, GET and DELETE with an unknown session id get 404."},
			body: func(ctx context.Context, e *env) {
				unknown := rand.Text()
				for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
					var body any
					if method == http.MethodPost {
						body = e.C.Request("tools/list", nil)
					}
					resp := e.send(ctx, e.C, method, unknown, body)
					step := func() {
						e.Expect(resp.Status).To(Equal(http.StatusNotFound), "%s with unknown session id %q", method, unknown)
					}
					if method == http.MethodGet && resp.Status != http.StatusNotFound {
						// A GET refused whatever its session stands on the GET stream.
						e.OnPremise(catalogue.PremiseGETStream, step)
					}
					step()
				}
			}},

		{Entry: catalogue.Entry{ID: "SESS-DELETE", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions, DependsOn: []string{"SESS-UNKNOWN-404"},
			Summary: "After a successful DELETE the id gets 404 (a 405 answer to DELETE skips the check)."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				e.end(sid)
				del, err := e.C.Delete(ctx, sid)
				e.Expect(err).NotTo(HaveOccurred())
				if del.Status == http.StatusMethodNotAllowed {
					e.Skip(report.NotOffered, "the target answers DELETE with 405: clients cannot end sessions")
				}
				e.Expect(del.Status).To(BeNumerically("~", 250, 50), "DELETE status must be 2xx")
				resp, err := e.C.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list on a deleted session")
			}},

		{Entry: catalogue.Entry{ID: "SESS-REINIT-NEW", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.WithSessions, SpecRef: catalogue.SpecSessions,
			Summary: "After a request on an unknown session id (404, or another refusal, which SESS-UNKNOWN-404 grades), an initialize without a session id starts a new, working session with a different id."},
			body: func(ctx context.Context, e *env) {
				gone := rand.Text()
				resp, err := e.C.Call(ctx, gone, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				// Which status the unknown id gets is SESS-UNKNOWN-404's to
				// grade; this check is about what the client does next.
				if resp.Status != http.StatusNotFound {
					e.Logf("tools/list on unknown session %q got %d, not 404 (SESS-UNKNOWN-404 grades that); a client that starts over must still get a new session", gone, resp.Status)
				}
				sid := e.connect(ctx, e.C)
				e.Expect(sid).NotTo(Equal(gone))
				e.expectWorks(ctx, e.C, sid)
			}},

		{Entry: catalogue.Entry{ID: "VER-INVALID-400", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.WithVersionHeader, Stateless: true, SpecRef: catalogue.SpecVersion,
			Summary: "A request with an unsupported MCP-Protocol-Version gets 400 (the header is new in 2025-06-18)."},
			body: func(ctx context.Context, e *env) {
				sid := e.connect(ctx, e.C)
				bad := e.client(e.C.URL, e.Config.RequestHeader())
				bad.ProtocolVersion = "1999-01-01"
				resp, err := bad.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				e.Expect(resp.Status).To(Equal(http.StatusBadRequest), "tools/list with MCP-Protocol-Version 1999-01-01")
			}},

		{Entry: catalogue.Entry{ID: "ORIGIN-403", Level: catalogue.Must, Section: "sessions", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecSecurity,
			Summary: "A request with a present but disallowed Origin (origins.disallowed, default https://mcp-conform.invalid) gets 403 (from 2025-11-25; before it, \"Servers MUST validate the Origin header\", and any 4xx refusal does)."},
			body: func(ctx context.Context, e *env) {
				foreign := e.Config.Origins.DisallowedOrigin()
				h := e.Config.RequestHeader()
				h.Set("Origin", foreign)
				evil := e.client(e.C.URL, h)
				what := "initialize"
				var resp *wire.Response
				var err error
				if e.modern() {
					// That revision has no initialize: a request of its own,
					// which a server may route past initialize's handler.
					what = "server/discover"
					resp, err = evil.CallModern(ctx, what, nil, nil)
				} else {
					resp, err = evil.Initialize(ctx, "")
				}
				e.Expect(err).NotTo(HaveOccurred())
				if sid := resp.SessionID(); sid != "" {
					e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, sid) })
				}
				if rev := wire.Revision(e.target.ProtocolVersion); rev.Before(wire.Revision20251125) {
					// Before 2025-11-25 the spec asks the Origin to be
					// validated, not for which status: any refusal does.
					e.Expect(resp.Status).To(And(BeNumerically(">=", 400), BeNumerically("<", 500)),
						"%s with Origin %q (a foreign site: DNS rebinding): at %s a refusal (4xx) validates it; 403 is required from 2025-11-25", what, foreign, rev)
					return
				}
				e.Expect(resp.Status).To(Equal(http.StatusForbidden), "%s with Origin %q (a foreign site: DNS rebinding)", what, foreign)
			}},
	}
}

// send sends one request with the client's headers and reads the answer.
func (e *env) send(ctx context.Context, c *wire.Client, method, sid string, body any) *wire.Response {
	req, err := c.NewHTTPRequest(ctx, method, sid, body)
	e.Expect(err).NotTo(HaveOccurred())
	if method == http.MethodGet {
		// A GET that is accepted would stream forever; its status is enough.
		s, err := c.Open(req)
		if se := new(wire.StatusError); errors.As(err, &se) {
			return &wire.Response{Status: se.Status, Body: []byte(se.Body)}
		}
		e.Expect(err).NotTo(HaveOccurred())
		s.Close()
		return &wire.Response{Status: s.Resp.StatusCode, Header: s.Resp.Header, IsSSE: true}
	}
	resp, err := c.Do(req)
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	return resp
}

// expectWorks checks that a session answers tools/list.
func (e *env) expectWorks(ctx context.Context, c *wire.Client, sid string) {
	resp, err := c.Call(ctx, sid, "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred())
	e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list %s: %s", onSession(sid), resp.Body)
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred())
	e.Expect(m.Error).To(BeNil(), "tools/list %s", onSession(sid))
}

// onSession says which session a request went on: none, against a
// stateless target.
func onSession(sid string) string {
	if sid == "" {
		return "without a session id (the target is stateless)"
	}
	return fmt.Sprintf("on session %q", sid)
}

// works reports whether resp is a result, not an error.
func works(resp *wire.Response) bool {
	if resp.Status != http.StatusOK {
		return false
	}
	m, err := resp.Result()
	return err == nil && m.Error == nil
}

// idBits estimates the entropy of an id from its length and the smallest
// common alphabet its characters fit.
func idBits(id string) float64 {
	s := strings.ReplaceAll(id, "-", "") // UUID separators carry nothing
	alphabet := 94.0
	switch {
	case strings.Trim(s, "0123456789abcdef") == "" || strings.Trim(s, "0123456789ABCDEF") == "":
		alphabet = 16
	case strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567=") == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz234567") == "":
		alphabet = 32
	case strings.Trim(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "":
		alphabet = 62
	case strings.Trim(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/=_") == "":
		alphabet = 64
	}
	return float64(len(s)) * math.Log2(alphabet)
}
