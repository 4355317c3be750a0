package serverchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// unsupportedVersion is a protocol version no server speaks.
const unsupportedVersion = "2099-01-01"

// modernChecks are the checks of the sessionless revision's HTTP
// transport (2026-07-28): its errors, the legacy surface and cancellation.
func modernChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "MODERN-VERSION-UNSUPPORTED", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Version,
			Summary: "2026-07-28: a request naming a protocol version the server does not implement gets 400 and UnsupportedProtocolVersionError: -32022, data.supported listing its versions, data.requested, and the request's id (\"it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions\")."},
			body: func(ctx context.Context, e *env) {
				c := e.client(e.C.URL, e.Config.RequestHeader())
				c.ProtocolVersion = unsupportedVersion
				id := "version-" + newKey()
				req, err := c.NewModernRequestID(ctx, id, "tools/list", nil, nil)
				e.Expect(err).NotTo(HaveOccurred())
				rerr, got := e.modernError(e.modernDo(req, "tools/list naming "+unsupportedVersion), "tools/list naming protocol version "+unsupportedVersion, http.StatusBadRequest, codeUnsupportedVersion)
				var data struct {
					Supported []string `json:"supported"`
					Requested *string  `json:"requested"`
				}
				e.Expect(json.Unmarshal(rerr.Data, &data)).To(Succeed(), "UnsupportedProtocolVersionError data %s", rerr.Data)
				e.Expect(data.Supported).To(ContainElement(e.target.ProtocolVersion), "data.supported %v: the versions the server supports, %s among them (server/discover lists it)", data.Supported, e.target.ProtocolVersion)
				e.Expect(data.Requested).NotTo(BeNil(), "data.requested is missing: %s", rerr.Data)
				e.Expect(*data.Requested).To(Equal(unsupportedVersion), "data.requested")
				e.Expect(sameID(`"`+id+`"`, got)).To(BeTrue(), "the error's id is %s, not the request's %q", got, id)
			}},

		{Entry: catalogue.Entry{ID: "MODERN-HEADER-MISMATCH", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#server-validation",
			Summary: "2026-07-28: MCP-Protocol-Version differing from _meta's version, Mcp-Method differing from the method or missing, and Mcp-Name differing from a tools/call's name each get 400 and HeaderMismatch (-32020) (\"servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response\" with -32020)."},
			body: func(ctx context.Context, e *env) {
				type mismatch struct {
					what string
					req  *http.Request
				}
				var cases []mismatch
				req := e.modernRequest(ctx, nil, "tools/list", map[string]any{"_meta": map[string]any{}})
				cases = append(cases, mismatch{"MCP-Protocol-Version 2026-07-28 with _meta naming 2025-11-25", e.rewriteMeta(req, "2025-11-25")})
				req = e.modernRequest(ctx, nil, "tools/list", nil)
				req.Header.Set(wire.HeaderMcpMethod, "tools/call")
				cases = append(cases, mismatch{"Mcp-Method tools/call on a tools/list", req})
				req = e.modernRequest(ctx, nil, "tools/list", nil)
				req.Header.Del(wire.HeaderMcpMethod)
				cases = append(cases, mismatch{"no Mcp-Method header", req})
				// Every case is sent: the Mcp-Name one names a declared tool,
				// or else the first the server lists.
				if name := e.namedTool(ctx); name != "" {
					req = e.modernRequest(ctx, nil, "tools/call", wire.ToolParams(name, map[string]any{}, ""))
					req.Header.Set(wire.HeaderMcpName, name+"-other")
					cases = append(cases, mismatch{"Mcp-Name " + name + "-other on a tools/call of " + name, req})
				} else {
					e.Logf("the server lists no tool: the Mcp-Name case has no tools/call to send")
				}
				for _, k := range cases {
					e.modernError(e.modernDo(k.req, k.what), k.what, http.StatusBadRequest, codeHeaderMismatch)
				}
			}},

		{Entry: catalogue.Entry{ID: "MODERN-METHOD-404", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Version,
			Summary: "2026-07-28: a request of a method the server does not implement gets 404 with JSON-RPC error -32601 (\"it MUST respond with 404 Not Found and a JSON-RPC error with code -32601\")."},
			body: func(ctx context.Context, e *env) {
				req := e.modernRequest(ctx, nil, "mcp-conform/no-such-method", nil)
				e.modernError(e.modernDo(req, "an unknown method"), "a request of the unknown method mcp-conform/no-such-method", http.StatusNotFound, codeMethodNotFound)
			}},

		{Entry: catalogue.Entry{ID: "MODERN-ERROR-ID", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Errors,
			Summary: "2026-07-28: the errors for an unknown method, a header mismatch and an unsupported version carry their request's id exactly (strings and integers; JSONRPC-ID-ECHO tries stranger ids) (\"Error responses MUST include the same ID as the request they correspond to\")."},
			body: func(ctx context.Context, e *env) { e.errorIDs(ctx) }},

		{Entry: catalogue.Entry{ID: "MODERN-GET-405", Level: catalogue.Should, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Legacy,
			Summary: "2026-07-28: GET on the MCP endpoint, naming the revision, gets 405 (\"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\")."},
			body: func(ctx context.Context, e *env) { e.expect405(ctx, http.MethodGet) }},
		{Entry: catalogue.Entry{ID: "MODERN-DELETE-405", Level: catalogue.Should, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Legacy,
			Summary: "2026-07-28: DELETE on the MCP endpoint, naming the revision, gets 405 (\"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\")."},
			body: func(ctx context.Context, e *env) { e.expect405(ctx, http.MethodDelete) }},

		{Entry: catalogue.Entry{ID: "MODERN-SESSION-IGNORED", Level: catalogue.Should, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Legacy,
			Summary: "2026-07-28: no answer carries an Mcp-Session-Id, and a request carrying one the server never issued is served as if it had none (\"An Mcp-Session-Id header on a request: ignore it, and do not mint or echo session IDs\")."},
			body: func(ctx context.Context, e *env) {
				resp, err := e.C.CallModern(ctx, "server/discover", nil, nil)
				e.Expect(err).NotTo(HaveOccurred(), "server/discover")
				e.Expect(resp.SessionID()).To(BeEmpty(), "server/discover's answer minted Mcp-Session-Id %q; %s has no sessions", resp.SessionID(), wire.SessionlessProtocolVersion)
				stray := "mcp-conform-" + newKey()
				req := e.modernRequest(ctx, nil, "tools/list", nil)
				req.Header.Set(wire.HeaderSessionID, stray)
				resp = e.modernDo(req, "tools/list with a stray Mcp-Session-Id")
				m, err := resp.Result()
				e.Expect(err).NotTo(HaveOccurred(), "tools/list carrying Mcp-Session-Id %s: HTTP %d (%s)", stray, resp.Status, excerptOf(resp))
				e.Expect(m.Error).To(BeNil(), "tools/list carrying Mcp-Session-Id %s was refused (HTTP %d); the header should be ignored", stray, resp.Status)
				e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list carrying a stray Mcp-Session-Id")
				e.Expect(resp.SessionID()).To(BeEmpty(), "the answer carries Mcp-Session-Id %q; a server of %s neither mints nor echoes session ids", resp.SessionID(), wire.SessionlessProtocolVersion)
			}},

		{Entry: catalogue.Entry{ID: "MODERN-LAST-EVENT-ID-IGNORED", Level: catalogue.Should, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Legacy, Needs: []catalogue.Key{catalogue.KeyNotifying},
			Summary: "2026-07-28: a request carrying the Last-Event-ID of an earlier call's stream gets its own answer only, nothing of that call replayed (\"A Last-Event-ID header: ignore it; streams are not resumable\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.lastEventIDIgnored(ctx) }},

		{Entry: catalogue.Entry{ID: "MODERN-CLOSE-CANCELS", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#cancellation", Needs: []catalogue.Key{catalogue.KeyStepping},
			Summary: "2026-07-28: after the harness closes a call's response stream, the call's work stops: the count it advances per step (tools.stepping) holds still well before the call would have finished (\"Closing the SSE response stream MUST be treated by the server as cancellation of that request\"; the server \"SHOULD stop work on the cancelled request as soon as practical\")."},
			need: stepNeed, body: func(ctx context.Context, e *env) { e.closeCancels(ctx) }},

		{Entry: catalogue.Entry{ID: "MODERN-CLOSE-SILENT", Level: catalogue.Must, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#cancellation", Needs: []catalogue.Key{catalogue.KeyNotifying, catalogue.KeyListen},
			Summary: "2026-07-28: after the harness closes a call's response stream, nothing of that call (its notifications, its response) arrives on an open subscriptions/listen stream or on a later request's stream (the server \"MUST NOT send any further messages for it\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.closeSilent(ctx) }},

		{Entry: catalogue.Entry{ID: "MODERN-SSE-UNBUFFERED", Level: catalogue.Should, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#receiving-messages",
			Summary: "2026-07-28: a call's SSE stream and a subscriptions/listen stream carry X-Accel-Buffering: no (\"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header\")."},
			need: notifyNeed, body: func(ctx context.Context, e *env) { e.sseUnbuffered(ctx) }},

		{Entry: catalogue.Entry{ID: "MODERN-KEEPALIVE", Level: catalogue.May, Section: "modern", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26HTTP + "#receiving-messages", Needs: []catalogue.Key{catalogue.KeyListen, catalogue.KeyKeepAlive},
			Summary: "2026-07-28: a quiet subscriptions/listen stream gets an SSE comment line within twice timings.keep_alive (servers \"are encouraged to periodically emit an SSE comment line\"; no keyword: graded as a MAY)."},
			need: keepAliveNeed, body: func(ctx context.Context, e *env) { e.keepAlives(ctx) }},
	}
}

// rewriteMeta returns req with its body's _meta protocol version set to v.
func (e *env) rewriteMeta(req *http.Request, v string) *http.Request {
	var body map[string]any
	e.Expect(json.NewDecoder(req.Body).Decode(&body)).To(Succeed())
	params, _ := body["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	meta[wire.MetaProtocolVersion] = v
	out, err := e.C.NewHTTPRequest(req.Context(), http.MethodPost, "", body)
	e.Expect(err).NotTo(HaveOccurred())
	for k, vs := range req.Header {
		out.Header[k] = vs
	}
	return out
}

// harmlessTool is a declared tool that is safe to call with no arguments
// by mistake (the stepping tool's reader, or the stateful one); "" if
// none is declared.
func (e *env) harmlessTool() string {
	if s := e.Config.Tools.Stepping; s != nil {
		return s.Read.Name
	}
	if s := e.Config.Tools.Stateful; s != nil {
		return s.Name
	}
	return ""
}

// namedTool is a tool for a request that must be refused before it runs:
// harmlessTool, the notifying tool, or the first tool the server lists.
func (e *env) namedTool(ctx context.Context) string {
	if name := e.harmlessTool(); name != "" {
		return name
	}
	if n := e.Config.Tools.Notifying; n != nil {
		return n.Name
	}
	m, err := e.modernDo(e.modernRequest(ctx, nil, "tools/list", nil), "tools/list").Result()
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err != nil || m.Error != nil || json.Unmarshal(m.Result, &list) != nil || len(list.Tools) == 0 {
		return ""
	}
	return list.Tools[0].Name
}

// expect405 sends method with the revision's MCP-Protocol-Version.
func (e *env) expect405(ctx context.Context, method string) {
	req, err := e.C.NewHTTPRequest(ctx, method, "", nil)
	e.Expect(err).NotTo(HaveOccurred())
	req.Header.Set(wire.HeaderProtocolVersion, e.target.ProtocolVersion)
	if method == http.MethodGet {
		req.Header.Set("Accept", wire.MediaTypeSSE)
	}
	resp := e.modernDo(req, method)
	e.Expect(resp.Status).To(Equal(http.StatusMethodNotAllowed), "%s on the MCP endpoint naming protocol %s: HTTP status (%s); the revision has no %s",
		method, e.target.ProtocolVersion, excerptOf(resp), map[string]string{http.MethodGet: "standalone GET stream", http.MethodDelete: "sessions to delete"}[method])
	if allow := resp.Header.Get("Allow"); allow == "" {
		e.Logf("the 405 has no Allow header (RFC 9110 asks for one)")
	}
}

// errorIDs sends requests the server must refuse, with ids of several
// shapes, and expects each error to carry its request's id.
func (e *env) errorIDs(ctx context.Context) {
	str := "error-id-" + newKey()
	type refused struct {
		what string
		id   any
		req  *http.Request
	}
	var cases []refused
	add := func(what string, id any, build func(id any) *http.Request) {
		cases = append(cases, refused{what, id, build(id)})
	}
	add("an unknown method", str, func(id any) *http.Request { return e.modernRequest(ctx, id, "mcp-conform/no-such-method", nil) })
	add("an unknown method", json.Number("12"), func(id any) *http.Request { return e.modernRequest(ctx, id, "mcp-conform/no-such-method", nil) })
	add("a header mismatch (Mcp-Method)", str+"-h", func(id any) *http.Request {
		r := e.modernRequest(ctx, id, "tools/list", nil)
		r.Header.Set(wire.HeaderMcpMethod, "tools/call")
		return r
	})
	add("an unsupported protocol version", json.Number("7"), func(id any) *http.Request {
		c := e.client(e.C.URL, e.Config.RequestHeader())
		c.ProtocolVersion = unsupportedVersion
		r, err := c.NewModernRequestID(ctx, id, "tools/list", nil, nil)
		e.Expect(err).NotTo(HaveOccurred())
		return r
	})
	for _, k := range cases {
		resp := e.modernDo(k.req, k.what)
		m, err := resp.Result()
		e.Expect(err).NotTo(HaveOccurred(), "%s: HTTP %d, want a JSON-RPC error response (%s)", k.what, resp.Status, excerptOf(resp))
		e.Expect(m.Error).NotTo(BeNil(), "%s was answered %s, not an error", k.what, kit.Clip(string(m.Result), 300))
		sent, _ := json.Marshal(k.id)
		e.Expect(sameID(string(sent), m.ID)).To(BeTrue(), "the error for %s (request id %s) carries id %s", k.what, sent, orNull(m.ID))
	}
}

func orNull(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	return string(raw)
}

// modernCall is a tools/call of the notifying tool on its own response stream.
func (e *env) modernCall(ctx context.Context, c *wire.Client, token string) *call {
	t := e.Config.Tools.Notifying
	id := "call-" + newKey()
	req, err := c.NewModernRequestID(ctx, id, "tools/call", wire.ToolParams(t.Name, t.Arguments, token), nil)
	e.Expect(err).NotTo(HaveOccurred())
	s, err := c.Open(req)
	if isStatus(err, http.StatusOK) {
		e.Skip(report.NotOffered, "the target answered tools/call with a JSON body, not an SSE stream; this check needs the response streamed")
	}
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", t.Name)
	raw, _ := json.Marshal(id)
	return &call{token: token, id: string(raw), post: e.collect("POST "+t.Name, s)}
}

// firstNote waits for k's first notification on its own stream.
func (e *env) firstNote(k *call) {
	e.Eventually(func() bool { return len(e.notes(k.post.Messages(), k)) > 0 || k.post.Ended() }).
		Should(BeTrue(), "the call's first %s", e.Config.Tools.Notifying.Method)
	e.Expect(e.notes(k.post.Messages(), k)).NotTo(BeEmpty(), "the call's stream ended before its first %s", e.Config.Tools.Notifying.Method)
}

// related are the messages among msgs that belong to call k: its
// notifications, its response, request-scoped notifications.
func (e *env) related(msgs []wire.Message, k *call) []string {
	var out []string
	for _, m := range msgs {
		if e.isNote(m, k) || k.isResponse(m) || m.Method == "notifications/progress" || m.Method == "notifications/message" {
			what := m.Method
			if what == "" {
				what = "the response"
			}
			out = append(out, fmt.Sprintf("%s%s %s%s", what, orEmpty(m.ID), m.Params, m.Result))
		}
	}
	return out
}

func orEmpty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return " id " + string(raw)
}

// lastEventIDIgnored: a POST with Last-Event-ID gets its own answer only.
func (e *env) lastEventIDIgnored(ctx context.Context) {
	k := e.modernCall(ctx, e.C, "lei-"+newKey())
	e.firstNote(k)
	last := k.post.LastID()
	if last == "" {
		last = "0"
		e.Logf("the call's stream carries no event ids (none are needed in %s); sending Last-Event-ID 0", wire.SessionlessProtocolVersion)
	}
	k.post.Close()
	req := e.modernRequest(ctx, nil, "tools/list", nil)
	req.Header.Set(wire.HeaderLastEventID, last)
	resp := e.modernDo(req, "tools/list with Last-Event-ID")
	e.Expect(resp.Status).To(Equal(http.StatusOK), "tools/list carrying Last-Event-ID %s (%s); the header should be ignored", last, excerptOf(resp))
	msgs, err := resp.Messages()
	e.Expect(err).NotTo(HaveOccurred(), "tools/list's answer")
	e.Expect(e.related(msgs, k)).To(BeEmpty(), "tools/list carrying Last-Event-ID %s replayed messages of the earlier call; %s has no resumption", last, wire.SessionlessProtocolVersion)
	e.Expect(responses(msgs)).To(HaveLen(1), "tools/list's answer holds %d responses", len(responses(msgs)))
}

// sseUnbuffered looks at the SSE answers a client meets: a call's stream
// and, if declared, a listen stream.
func (e *env) sseUnbuffered(ctx context.Context) {
	type seen struct{ what, value string }
	var streams []seen
	if e.Config.Tools.Notifying != nil {
		k := e.modernCall(ctx, e.C, "buf-"+newKey())
		streams = append(streams, seen{"the tools/call stream", k.post.s.Resp.Header.Get("X-Accel-Buffering")})
		k.post.Close()
	}
	if e.Config.Listen != nil {
		l := e.listen(ctx, e.C, "buffering-"+newKey(), newKey())
		streams = append(streams, seen{"the subscriptions/listen stream", l.s.Resp.Header.Get("X-Accel-Buffering")})
	}
	if len(streams) == 0 {
		e.Skip(report.NeedsProfileKey, "needs a response stream: declare tools.notifying or listen in the target profile")
	}
	var wrong []string
	for _, s := range streams {
		if s.value != "no" {
			got := "no X-Accel-Buffering header"
			if s.value != "" {
				got = "X-Accel-Buffering: " + quoted(s.value, 60)
			}
			wrong = append(wrong, s.what+" carries "+got)
		}
	}
	if len(wrong) > 0 {
		e.Failf("%s; an SSE stream should carry X-Accel-Buffering: no, so that a proxy does not hold its events back", strings.Join(wrong, "; "))
	}
}
