package serverchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	. "github.com/onsi/gomega"
)

// envelope is the body of a 404 for an expired session.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Reason string `json:"reason"`
			Resume *struct {
				Method string `json:"method"`
				Via    string `json:"via"`
			} `json:"resume"`
		} `json:"data"`
	} `json:"error"`
}

// envelopeChecks are the envelope checks.
func envelopeChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "ENVELOPE-404", Level: catalogue.Res, Section: "envelope", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "session-expired-envelope", DependsOn: []string{"SESS-UNKNOWN-404"},
			Summary: "An unknown session id gets 404 application/json with the -32003 session-expired envelope."},
			body: func(ctx context.Context, e *env) {
				e.expectEnvelope(ctx, rand.Text())
			}},

		{Entry: catalogue.Entry{ID: "ENVELOPE-RESUME-HINT", Level: catalogue.Res, Section: "envelope", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "session-expired-envelope", DependsOn: []string{"ENVELOPE-404"},
			Summary: "An envelope's data.resume names a listed tool (method) and its resume-token argument (via)."},
			body: func(ctx context.Context, e *env) {
				got := e.expectEnvelope(ctx, rand.Text())
				hint := got.Error.Data.Resume
				if hint == nil {
					e.Skip(report.NotOffered, "the envelope carries no data.resume")
				}
				e.Expect(hint.Method).NotTo(BeEmpty(), "data.resume.method")
				e.Expect(hint.Via).NotTo(BeEmpty(), "data.resume.via")
				sid := e.connect(ctx, e.C)
				resp, err := e.C.Call(ctx, sid, "tools/list", nil)
				e.Expect(err).NotTo(HaveOccurred())
				m, err := resp.Result()
				e.Expect(err).NotTo(HaveOccurred())
				var list struct {
					Tools []struct {
						Name        string `json:"name"`
						InputSchema struct {
							Properties map[string]json.RawMessage `json:"properties"`
						} `json:"inputSchema"`
					} `json:"tools"`
				}
				e.Expect(json.Unmarshal(m.Result, &list)).To(Succeed(), "tools/list result")
				for _, t := range list.Tools {
					if t.Name == hint.Method {
						e.Expect(t.InputSchema.Properties).To(HaveKey(hint.Via), "tool %s has no argument %q (data.resume.via)", t.Name, hint.Via)
						return
					}
				}
				e.Fail("data.resume.method " + hint.Method + " is not a tool the server lists")
			}},

		{Entry: catalogue.Entry{ID: "RESUME-TOKEN-OWNER", Level: catalogue.Res, Section: "envelope", Revisions: catalogue.WithSessions, SpecRef: catalogue.ResilienceProfile + "session-ownership", Needs: []catalogue.Key{catalogue.KeyPrincipals, catalogue.KeyResumable}, DependsOn: []string{"ENVELOPE-RESUME-HINT"},
			Summary: "A resume token presented to data.resume.method by another principal than the one it was issued to is refused."},
			body: func(ctx context.Context, e *env) {
				hint := e.resumeHint(ctx)
				owner, thief := e.as(0), e.as(1)
				osid, tsid := e.connect(ctx, owner), e.connect(ctx, thief)
				token := e.resumeToken(ctx, owner, osid, hint.Via)
				args := map[string]any{}
				if r := e.Config.Tools.Resumable; r.Name == hint.Method {
					for k, v := range r.Arguments {
						args[k] = v
					}
				}
				args[hint.Via] = token
				call := wire.ToolParams(hint.Method, args, "")

				resp, err := thief.Call(ctx, tsid, "tools/call", call)
				e.Expect(err).NotTo(HaveOccurred())
				if ok, why := accepted(resp); ok {
					e.Failf("%s with the %s issued to %s, called by %s on its own session, was accepted (%s): a stolen token continues another principal's work",
						hint.Method, hint.Via, e.principal(0), e.principal(1), why)
				}
				e.Logf("the other principal's call was refused, as it should be")
				resp, err = owner.Call(ctx, osid, "tools/call", call)
				e.Expect(err).NotTo(HaveOccurred())
				ok, why := accepted(resp)
				e.Expect(ok).To(BeTrue(), "%s with the %s, called by %s to whom it was issued: %s (the token must work for its owner, or the refusal above proves nothing)",
					hint.Method, hint.Via, e.principal(0), why)
			}},
	}
}

// resumeHint returns the data.resume of the target's 404 for an unknown
// session id, and skips the check when it has none.
func (e *env) resumeHint(ctx context.Context) (hint struct{ Method, Via string }) {
	resp, err := e.C.Call(ctx, rand.Text(), "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred())
	if sid := resp.SessionID(); sid != "" {
		e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, sid) })
	}
	var env404 envelope
	if json.Unmarshal(resp.Body, &env404) != nil || env404.Error == nil || env404.Error.Data.Resume == nil ||
		env404.Error.Data.Resume.Method == "" || env404.Error.Data.Resume.Via == "" {
		e.Skip(report.NotOffered, "the 404 for an unknown session carries no data.resume {method, via}: the target names no resume token")
	}
	r := env404.Error.Data.Resume
	return struct{ Method, Via string }{r.Method, r.Via}
}

// resumeToken gets a resume token as tools.resumable says: the tool's
// structuredContent, or Poll's, carries it under via.
func (e *env) resumeToken(ctx context.Context, c *wire.Client, sid, via string) string {
	r := e.Config.Tools.Resumable
	sc := e.structured(ctx, c, sid, r.Name, r.Arguments)
	if tok, ok := sc[via].(string); ok && tok != "" {
		return tok
	}
	if r.Poll == "" {
		e.Failf("tools.resumable %s returned no %s in its structuredContent (%v), and the profile names no poll tool", r.Name, via, sc)
	}
	var token string
	e.Eventually(func() bool {
		got := e.structured(ctx, c, sid, r.Poll, sc)
		token, _ = got[via].(string)
		return token != ""
	}).Should(BeTrue(), "a %s in the structuredContent of %s (tools.resumable.poll)", via, r.Poll)
	return token
}

// structured calls a tool and returns its result's structuredContent.
func (e *env) structured(ctx context.Context, c *wire.Client, sid, name string, args map[string]any) map[string]any {
	resp, err := c.Call(ctx, sid, "tools/call", wire.ToolParams(name, args, ""))
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", name)
	ok, why := accepted(resp)
	e.Expect(ok).To(BeTrue(), "tools/call %s: %s", name, why)
	m, _ := resp.Result()
	var res struct {
		Structured map[string]any `json:"structuredContent"`
	}
	e.Expect(json.Unmarshal(m.Result, &res)).To(Succeed(), "tools/call %s result", name)
	return res.Structured
}

// accepted reports whether a tools/call answer is a result that is not an
// error, and otherwise what it is.
func accepted(resp *wire.Response) (bool, string) {
	if resp.Status != http.StatusOK {
		return false, fmt.Sprintf("HTTP %d %s", resp.Status, kit.Clip(string(resp.Body), 200))
	}
	m, err := resp.Result()
	if err != nil {
		return false, err.Error()
	}
	if m.Error != nil {
		return false, m.Error.Error()
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return false, "a result that is not a CallToolResult"
	}
	if res.IsError {
		return false, "a tool error: " + kit.Clip(string(m.Result), 200)
	}
	return true, "a result: " + kit.Clip(string(m.Result), 200)
}

// principal names profile principal i for messages.
func (e *env) principal(i int) string {
	if n := e.Config.Principals[i].Name; n != "" {
		return n
	}
	return []string{"the first principal", "the second principal"}[i]
}

// expectEnvelope sends tools/list with a session id the server does not know
// and checks the answer is the 404 session-expired envelope.
func (e *env) expectEnvelope(ctx context.Context, sid string) envelope {
	return e.envelopeOf(e.gone404(ctx, sid))
}

// gone404 sends tools/list on session sid, which must be gone, and expects
// 404.
func (e *env) gone404(ctx context.Context, sid string) *wire.Response {
	resp, err := e.C.Call(ctx, sid, "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred())
	if hint := resp.SessionID(); hint != "" && hint != sid {
		e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, hint) })
	}
	e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with unknown session id %q", sid)
	return resp
}

// envelopeOf expects a 404 to carry the session-expired envelope, which
// ENVELOPE-404 grades: every other check reading it stands on that.
func (e *env) envelopeOf(resp *wire.Response) (env404 envelope) {
	e.OnPremise(catalogue.PremiseEnvelope, func() { env404 = e.readEnvelope(resp) })
	return env404
}

// readEnvelope is envelopeOf's step.
func (e *env) readEnvelope(resp *wire.Response) envelope {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	e.Expect(mt).To(Equal(wire.MediaTypeJSON), "Content-Type of the 404")
	var env404 envelope
	e.Expect(json.Valid(resp.Body)).To(BeTrue(), "404 body %s is not JSON", quoted(string(resp.Body), 300))
	if json.Unmarshal(resp.Body, &env404) != nil {
		e.Failf(`404 body %s is JSON but not a JSON-RPC error response ({"jsonrpc":"2.0","id":null,"error":{"code":…,"message":…}})`, quoted(string(resp.Body), 300))
	}
	e.Expect(env404.JSONRPC).To(Equal("2.0"), "jsonrpc")
	e.Expect(string(env404.ID)).To(Equal("null"), "id must be null")
	e.Expect(env404.Error).NotTo(BeNil(), "the 404 body %s has no error object", resp.Body)
	// The envelope is this project's resilience convention, not the
	// specification's: the message says so, and what came instead.
	const ext = "the session-expired envelope of the resilience profile (docs/resilience.md), not a requirement of the MCP specification"
	e.Expect(env404.Error.Code).To(Equal(wire.CodeSessionExpired), "error.code is %d, want %d: %s", env404.Error.Code, wire.CodeSessionExpired, ext)
	e.Expect(env404.Error.Message).To(Equal(wire.SessionExpiredMessage), "error.message is %q, want %q: %s", env404.Error.Message, wire.SessionExpiredMessage, ext)
	e.Expect(env404.Error.Data.Reason).To(Equal(wire.SessionExpiredReason), "error.data.reason is %q, want %q: %s", env404.Error.Data.Reason, wire.SessionExpiredReason, ext)
	return env404
}
