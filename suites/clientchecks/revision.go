package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// The revision a restarted scripted server keeps: the reference server
// speaks both, so a hook answers what the other revision sends as a
// server of one alone would.
const (
	eraLegacy = wire.DefaultProtocolVersion
	eraModern = wire.SessionlessProtocolVersion
)

// maxAfterRefusal bounds the requests of 2026-07-28 a client may send after
// a 2025-11-25 server refused one: a probe and a retry, never a loop.
const maxAfterRefusal = 2

// legacyRefusal is what a 2025-11-25 server without a session for the
// request answers (the TypeScript SDK's words): no recognized error of
// 2026-07-28 in it.
const legacyRefusal = `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`

// isModern reports a request of 2026-07-28: server/discover, its
// MCP-Protocol-Version, or its version in _meta.
func (x exchange) isModern() bool {
	if x.RPC.Method == "server/discover" || x.ProtocolVersion == wire.SessionlessProtocolVersion {
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(x.RPC.Params, &p)
	_, ok := p.Meta[wire.MetaProtocolVersion]
	return ok
}

// setEra makes the server speak era alone from now on ("": both).
func (s *scriptedServer) setEra(era string) {
	s.mu.Lock()
	s.era = era
	s.mu.Unlock()
}

// setRefusal makes a server of 2026-07-28 alone refuse a request of an
// older revision with code: codeUnsupportedVersion or codeHeaderMismatch.
func (s *scriptedServer) setRefusal(code int) {
	s.mu.Lock()
	s.refusal = code
	s.mu.Unlock()
}

func (s *scriptedServer) refusalCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusal == 0 {
		return codeUnsupportedVersion
	}
	return s.refusal
}

// restartAs is F-RESTART into a server that speaks era alone.
func (s *scriptedServer) restartAs(x *exchange, era string) {
	s.rec.note(x, "the server restarts as a %s server only, before this request", era)
	s.setEra(era)
	if err := s.restart(); err != nil {
		s.rec.note(x, "restart failed: %v", err)
	}
}

// refuseEra answers a request of the revision the server no longer
// speaks: 400 without a modern error for 2026-07-28 at a 2025-11-25
// server; 405 for GET and DELETE, and 400 with -32022 for any other
// request (-32020 if setRefusal says so), at a 2026-07-28 server.
func (s *scriptedServer) refuseEra(x *exchange, w http.ResponseWriter) bool {
	s.mu.Lock()
	era := s.era
	s.mu.Unlock()
	switch {
	case era == eraLegacy && x.isModern():
		s.rec.note(x, "refused as a %s server would: 400 without an error of %s", eraLegacy, eraModern)
		w.Header().Set("Content-Type", wire.MediaTypeJSON)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, legacyRefusal)
		return true
	case era == eraModern && (x.Method == http.MethodGet || x.Method == http.MethodDelete):
		s.rec.note(x, "refused as a %s server would: 405", eraModern)
		w.Header().Set("Allow", http.MethodPost)
		w.Header().Set("Content-Type", wire.MediaTypeJSON)
		w.WriteHeader(http.StatusMethodNotAllowed)
		fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Method not allowed: `+eraModern+` has no sessions; use POST"},"id":null}`)
		return true
	case era == eraModern && !x.isModern():
		code := s.refusalCode()
		s.rec.note(x, "refused as a %s server would: 400 and %d", eraModern, code)
		w.Header().Set("Content-Type", wire.MediaTypeJSON)
		w.WriteHeader(http.StatusBadRequest)
		w.Write(modernRefusal(x, code))
		return true
	}
	return false
}

// fellBack reports whether run cr initialized a session (at a 2025-11-25
// server) and got its call's result; why not, if not.
func (e *clientEnv) fellBack(ctx context.Context, cr *clientRun) string {
	lines := cr.wait(ctx)
	if len(e.createdIn(cr.n)) == 0 {
		return fmt.Sprintf("run %d initialized no session at a %s server", cr.n, eraLegacy)
	}
	if cr.code != 0 || !slices.ContainsFunc(lines, func(l outLine) bool { return l.Type == contract.LineResult }) {
		return fmt.Sprintf("run %d's call at a %s server did not succeed (%s)", cr.n, eraLegacy, cr.exitText())
	}
	return ""
}

// firstAfter returns the first of xs after t that matches, or nil.
func firstAfter(xs []exchange, n int, match func(exchange) bool) *exchange {
	for _, x := range xs {
		if x.N > n && match(x) {
			return &x
		}
	}
	return nil
}

// refusedIn returns run n's first request a server of era alone refused
// (refuseEra), or nil.
func (e *clientEnv) refusedIn(n int, era string) *exchange {
	return firstAfter(e.exchanges(n), 0, func(x exchange) bool { return strings.HasPrefix(x.Note, "refused as a "+era+" ") })
}

// revisionChecks are the client checks of the sessionless revision's
// transport: a broken stream, a server that changes revision, the cached
// revision.
func revisionChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-REISSUE", Level: catalogue.Must, Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Change,
			Summary: "2026-07-28: when a call's response stream breaks before its response, the client sends the call once more as a new request with a new id, prints its result, and sends no GET and no Last-Event-ID (\"A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID\")."},
			runs: 1, body: func(ctx context.Context, e *clientEnv) {
				var armed atomic.Bool
				e.onCalls(func(i int, x *exchange, w http.ResponseWriter) bool {
					if !armed.CompareAndSwap(false, true) {
						return false
					}
					e.srv.rec.note(x, "the response stream opens and breaks before the response: the call is lost")
					w.Header().Set("Content-Type", wire.MediaTypeSSE)
					w.WriteHeader(http.StatusOK)
					http.NewResponseController(w).Flush()
					return true
				})
				r := e.start(callRun("echo", map[string]any{"text": "again"}))
				r.wait(ctx)
				r.declined()
				calls := e.toolCalls(r.n)
				e.Expect(calls).NotTo(BeEmpty(), "run %d sent no tools/call%s", r.n, r.clientError())
				e.expectCount(calls, 2, "after its call's response stream broke (#%d), the client must re-issue the call once as a new request; its tools/call requests", calls[0].N)
				e.Expect(string(calls[1].RPC.ID)).NotTo(Equal(string(calls[0].RPC.ID)), "#%d re-issued the call with the broken request's id; %s wants a new request id", calls[1].N, eraModern)
				e.Expect(calls[1].tool()).To(Equal("echo"), "#%d: the re-issued call's tool", calls[1].N)
				e.Expect(calls[1].arguments()).To(Equal(calls[0].arguments()), "#%d: the re-issued call's arguments", calls[1].N)
				for _, x := range e.exchanges(r.n) {
					e.Expect(x.Method).To(Equal(http.MethodPost), "#%d: a %s; %s resumes no stream (no GET)", x.N, x.Method, eraModern)
					e.Expect(x.LastEventID).To(BeEmpty(), "#%d sent Last-Event-ID; %s resumes no stream", x.N, eraModern)
				}
				if r.code != 0 {
					r.finish(ctx, "the re-issued call must succeed")
				}
				e.Expect(resultText(r.result().Result)).To(Equal("again"), "the re-issued call's result")
			}},

		{Entry: catalogue.Entry{ID: "CLI-UPGRADE", Level: catalogue.Should, Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Compat,
			Summary: "2026-07-28: a client that fell back to 2025-11-25 and finds the server restarted as 2026-07-28 only asks server/discover, sends the interrupted call once more in 2026-07-28, and presents no session id after that (\"a recognized modern JSON-RPC error ... identifies a modern server: the client retries with a supported version rather than falling back\"); graded twice, each time from an empty state directory: the call refused with 400 and -32022 listing 2026-07-28, then with 400 and -32020 (HeaderMismatch: a 2025-11-25 request lacks the headers and _meta of 2026-07-28, \"rejected per server validation with 400 Bad Request\"). Whether a later start remembers the upgrade is not graded here but in CLI-REVISION-CACHE: persisting it is a MAY, so a client that probes again at its next start still upgrades."},
			runs: 4, body: func(ctx context.Context, e *clientEnv) {
				// Both recognized errors a server of 2026-07-28 alone refuses an
				// older request with, each from a client that cached nothing.
				e.upgrade(ctx, codeUnsupportedVersion)
				e.freshState()
				e.upgrade(ctx, codeHeaderMismatch)
			}},

		{Entry: catalogue.Entry{ID: "CLI-DOWNGRADE", Level: catalogue.Should, Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#backward-compatibility",
			Summary: "2026-07-28: a client that spoke 2026-07-28 and finds the server restarted as 2025-11-25 only (a 400 without a recognized modern error) initializes a session and sends its call there once, without looping (\"If the body is empty or is not a recognized modern JSON-RPC error, fall back to initialize and continue with the legacy version for subsequent requests\")."},
			runs: 2, body: func(ctx context.Context, e *clientEnv) {
				a := e.run(ctx, callRun("echo", map[string]any{"text": "one"}))
				if e.spokeModern(a.n) == "" {
					e.Skipf(report.NotApplicable, "not applicable: run %d did not speak %s, so there is nothing to fall back from", a.n, eraModern)
				}
				var armed atomic.Bool
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					if x.Run > a.n && armed.CompareAndSwap(false, true) {
						e.srv.restartAs(x, eraLegacy)
					}
					return false
				})
				b := e.start(callRun("echo", map[string]any{"text": "two"}))
				b.wait(ctx)
				b.declined()
				refused := e.refusedIn(b.n, eraLegacy)
				if refused == nil {
					e.Skipf(report.NotApplicable, "not applicable: run %d's first request was of %s, which the server still speaks", b.n, eraLegacy)
				}
				xs := e.exchanges(b.n)
				modern := 0
				var init *exchange
				var calls []exchange
				for _, x := range xs {
					if x.N <= refused.N {
						continue
					}
					if x.isModern() {
						modern++
					}
					if init == nil && x.isFreshInit() && x.RespSessionID != "" {
						init = &x
					}
					if x.RPC.Method == "tools/call" {
						calls = append(calls, x)
					}
				}
				e.Expect(modern).To(BeNumerically("<=", maxAfterRefusal), "after #%d was refused with a 400 that holds no error of %s, the client sent %d more requests of that revision: it must fall back to initialize, not loop", refused.N, eraModern, modern)
				e.Expect(init).NotTo(BeNil(), "after #%d was refused with a 400 that holds no error of %s (a %s server), the client initialized no session: it must fall back to initialize%s", refused.N, eraModern, eraLegacy, b.clientError())
				e.expectCount(calls, 1, "the call must be sent once, on the new session; tools/call after the refusal")
				e.Expect(calls[0].SessionID).To(Equal(init.RespSessionID), "#%d: the call's session", calls[0].N)
				if b.code != 0 {
					b.finish(ctx, "the call must succeed in "+eraLegacy)
				}
				e.Expect(resultText(b.result().Result)).To(Equal("two"), "the call's result")
			}},

		{Entry: catalogue.Entry{ID: "CLI-REVISION-CACHE", Level: catalogue.May, Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Compat,
			Summary: "2026-07-28: a client remembers in its state directory the revision it found a server speaks (\"Clients SHOULD cache the result for the lifetime of the server process (stdio) or origin (HTTP), and MAY persist it across restarts of the same server configuration, re-probing if the cached assumption later fails\"): fallen back to 2025-11-25, restarted, it probes no more (no server/discover, no 2026-07-28 request) until the server, restarted as 2026-07-28 only, refuses its call; once it has moved to 2026-07-28 (CLI-UPGRADE grades the move), its next start speaks 2026-07-28 at once (no initialize, no 2025-11-25 request). The stored upgrade is graded here rather than in CLI-UPGRADE because keeping the revision across restarts is the client's own MAY."},
			runs: 3, body: func(ctx context.Context, e *clientEnv) {
				e.revisionCache(ctx)
			}},
	}
}

// OnlySessionless reports a client check about 2026-07-28 alone, not
// applicable to a client that does not speak it.
func OnlySessionless(id string) bool {
	e, ok := lookup(id)
	return ok && !e.Revisions.Has(wire.Revision20251125)
}
