package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// codeInvalidRequest is JSON-RPC's "Invalid Request" error code.
const codeInvalidRequest = -32600

// echoIDs are request ids that decoders commonly change: beyond 2^53 (the
// integers a float64 holds), a fraction, an integer beyond 64 bits, and
// strings (one of them numeric, one full of escapes).
var echoIDs = []string{
	`9007199254740993`,
	`1.5`,
	`123456789012345678901234567890`,
	`"mcp-conform id ü/1"`,
	`"9007199254740993"`,
	`"mcp-conform \"q\" \\ \t \u00e9 \ud83d\ude00 \u2028 /"`,
}

// jsonrpcChecks are the JSON-RPC checks.
func jsonrpcChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "JSONRPC-NOTIFY-202", Level: catalogue.Must, Section: "jsonrpc", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecSending,
			Summary: "The notifications/initialized that completes the handshake gets 202 Accepted with no body (\"If the server accepts the input, the server MUST return HTTP status code 202 Accepted with no body\"); every check that opens a session stands on the notification being accepted (any 2xx; an error status blocks them)."},
			body: func(ctx context.Context, e *env) { e.notify202(ctx) }},
		{Entry: catalogue.Entry{ID: "JSONRPC-ID-ECHO", Level: catalogue.Should, Section: "jsonrpc", Revisions: catalogue.EveryRevision, Stateless: true, SpecRef: catalogue.SpecResponses,
			Summary: "A response carries its request's id exactly (2^53+1, 1.5, a 30-digit integer, strings with escapes), or the request is refused with -32600 whose id is that id or null, never another."},
			body: func(ctx context.Context, e *env) {
				send := e.idEchoRequests(ctx)
				for _, id := range echoIDs {
					what, resp := send(id)
					m, err := resp.Result()
					e.Expect(err).NotTo(HaveOccurred(), "%s: HTTP %d, no JSON-RPC answer", what, resp.Status)
					switch {
					case m.Error != nil && m.Error.Code == codeInvalidRequest && (sameID(id, m.ID) || isNull(m.ID)):
						// A refusal may carry the id, or null for a request
						// whose id it could not read; never another id.
						e.Logf("%s refused with %d (%s) and id %s: allowed", what, m.Error.Code, m.Error.Message, orNull(m.ID))
					case sameID(id, m.ID):
						e.Expect(m.Error).To(BeNil(), "%s", what)
					case m.Error != nil:
						e.Failf("%s was refused with error %d %q and id %s: an error carries its request's id, or null for an Invalid Request (%d) whose id could not be read",
							what, m.Error.Code, m.Error.Message, orNull(m.ID), codeInvalidRequest)
					default:
						e.Failf("%s was answered with id %s: a client matching answers by id never sees its answer (refuse such ids with %d instead)",
							what, orNull(m.ID), codeInvalidRequest)
					}
				}
			}},
		{Entry: catalogue.Entry{ID: "JSONRPC-ERROR-ID", Level: catalogue.Must, Section: "jsonrpc", Revisions: catalogue.WithSessions, Stateless: true, SpecRef: catalogue.SpecErrorResponses,
			Summary: "A request of an unknown method, on a live session, is answered with a JSON-RPC error (JSON or SSE, as the answer to every request must be) that carries the request's id, a string and an integer alike (\"Error responses MUST include the same ID as the request they correspond to\"); MODERN-ERROR-ID is the same rule at 2026-07-28."},
			body: func(ctx context.Context, e *env) { e.sessionErrorIDs(ctx) }},
	}
}

// sessionErrorIDs sends requests of a method no server has, on a session
// (none on a stateless target), and expects each error to carry the
// request's id. An answer that is no error leaves nothing to judge.
func (e *env) sessionErrorIDs(ctx context.Context) {
	sid := e.connect(ctx, e.C)
	for _, id := range []string{`"error-id-` + newKey() + `"`, `12`} {
		what := "mcp-conform/no-such-method with id " + id
		resp, err := e.C.Post(ctx, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"mcp-conform/no-such-method"}`, id))
		e.Expect(err).NotTo(HaveOccurred(), "%s", what)
		m, err := resp.Result()
		e.Expect(err).NotTo(HaveOccurred(), "%s: HTTP %d, want a JSON-RPC error response (%s)", what, resp.Status, excerptOf(resp))
		if m.Error == nil {
			e.Skip(report.NotOffered, fmt.Sprintf("%s was answered with a result, not an error (%s): no error id to judge", what, kit.Clip(string(m.Result), 200)))
		}
		e.Expect(sameID(id, m.ID)).To(BeTrue(), "the error for %s (%d %q) carries id %s: a client matching answers by id never sees it",
			what, m.Error.Code, kit.Clip(m.Error.Message, 200), orNull(m.ID))
	}
}

// notify202 runs the initialize handshake by hand and expects its
// notifications/initialized accepted with 202 and no body: the premise of
// every check that opens a session (catalogue.PremiseHandshake).
func (e *env) notify202(ctx context.Context) {
	resp, err := e.C.Initialize(ctx, "")
	e.Expect(err).NotTo(HaveOccurred(), "initialize")
	e.Expect(resp.Status).To(Equal(http.StatusOK), "initialize: HTTP status (%s)", excerptOf(resp))
	sid := resp.SessionID()
	if sid != "" {
		e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, sid) })
	}
	n, err := e.C.Post(ctx, sid, wire.Notification("notifications/initialized"))
	e.Expect(err).NotTo(HaveOccurred(), "notifications/initialized")
	e.Expect(n.Status).To(Equal(http.StatusAccepted), "notifications/initialized: HTTP status%s", bodyNote(n))
	e.Expect(len(n.Body)).To(BeZero(), "notifications/initialized was accepted with a body (Content-Type %q): %s; the answer to a notification has none",
		n.Header.Get("Content-Type"), excerptOf(n))
}

// expectAccepted expects a notification of the handshake accepted: any
// 2xx, as wire.Connect takes it; whether it is the 202 the specification
// asks for is JSONRPC-NOTIFY-202's (catalogue.PremiseHandshake).
func (e *env) expectAccepted(n *wire.Response, what string) {
	e.Helper()
	e.OnPremise(catalogue.PremiseHandshake, func() {
		e.Expect(n.Status/100).To(Equal(2), "%s: HTTP status %d, an error%s", what, n.Status, bodyNote(n))
	})
}

// idEchoRequests returns how the check sends a request with a raw id:
// ping on a session of the sessions' era (none on a stateless target),
// tools/list at 2026-07-28, which has neither initialize nor ping.
func (e *env) idEchoRequests(ctx context.Context) func(id string) (string, *wire.Response) {
	if e.modern() {
		return func(id string) (string, *wire.Response) {
			what := "tools/list with id " + id
			return what, e.modernDo(e.modernRequest(ctx, json.RawMessage(id), "tools/list", nil), what)
		}
	}
	sid := e.connect(ctx, e.C)
	return func(id string) (string, *wire.Response) {
		what := "ping with id " + id
		resp, err := e.C.Post(ctx, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id))
		e.Expect(err).NotTo(HaveOccurred(), "%s", what)
		return what, resp
	}
}

// isNull reports an id that is JSON null.
func isNull(id json.RawMessage) bool { return string(bytes.TrimSpace(id)) == "null" }

// sameID reports whether got is the id sent: the same string, or the same
// number exactly (1.5 and 1.50 are the same; 9007199254740992 is not
// 9007199254740993).
func sameID(sent string, got json.RawMessage) bool {
	got = bytes.TrimSpace(got)
	var s1, s2 string
	if json.Unmarshal([]byte(sent), &s1) == nil {
		return json.Unmarshal(got, &s2) == nil && s1 == s2
	}
	a, ok1 := new(big.Rat).SetString(sent)
	b, ok2 := new(big.Rat).SetString(string(got))
	return ok1 && ok2 && a.Cmp(b) == 0
}

// bodyNote quotes an answer's body for a message, or says it had none.
func bodyNote(resp *wire.Response) string {
	if b := excerptOf(resp); b != "" {
		return fmt.Sprintf(" (body %q)", b)
	}
	return " (no body)"
}
