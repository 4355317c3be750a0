package serverchecks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"mime"
	"net/http"

	"github.com/mcp-conform/mcp-conform/internal/wire"
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
		{id: "ENVELOPE-404", body: func(ctx context.Context, e *env) {
			e.expectEnvelope(ctx, rand.Text())
		}},

		{id: "ENVELOPE-RESUME-HINT", body: func(ctx context.Context, e *env) {
			got := e.expectEnvelope(ctx, rand.Text())
			hint := got.Error.Data.Resume
			if hint == nil {
				e.Skip("the envelope carries no data.resume")
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
	}
}

// expectEnvelope sends tools/list with a session id the server does not know
// and checks the answer is the 404 session-expired envelope.
func (e *env) expectEnvelope(ctx context.Context, sid string) envelope {
	resp, err := e.C.Call(ctx, sid, "tools/list", nil)
	e.Expect(err).NotTo(HaveOccurred())
	if hint := resp.SessionID(); hint != "" && hint != sid {
		e.Cleanup(func(ctx context.Context) { _, _ = e.C.Delete(ctx, hint) })
	}
	e.Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with unknown session id %q", sid)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	e.Expect(mt).To(Equal("application/json"), "Content-Type of the 404")
	var env404 envelope
	e.Expect(json.Unmarshal(resp.Body, &env404)).To(Succeed(), "404 body %q is not JSON", resp.Body)
	e.Expect(env404.JSONRPC).To(Equal("2.0"), "jsonrpc")
	e.Expect(string(env404.ID)).To(Equal("null"), "id must be null")
	e.Expect(env404.Error).NotTo(BeNil(), "error object")
	e.Expect(env404.Error.Code).To(Equal(wire.CodeSessionExpired), "error.code")
	e.Expect(env404.Error.Message).To(Equal(wire.SessionExpiredMessage), "error.message")
	e.Expect(env404.Error.Data.Reason).To(Equal(wire.SessionExpiredReason), "error.data.reason")
	return env404
}
