package suites

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"mime"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The session-expired envelope of the resilience profile.
const (
	envelopeCode    = -32003
	envelopeMessage = "Session expired; reinitialize"
	envelopeReason  = "session_expired"
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

// envelopeChecks registers the envelope checks.
func envelopeChecks() {
	check("ENVELOPE-404", nil, func(ctx context.Context, e *Env) {
		e.expectEnvelope(ctx, rand.Text())
	})

	check("ENVELOPE-RESUME-HINT", nil, func(ctx context.Context, e *Env) {
		env := e.expectEnvelope(ctx, rand.Text())
		hint := env.Error.Data.Resume
		if hint == nil {
			Skip("the envelope carries no data.resume")
		}
		Expect(hint.Method).NotTo(BeEmpty(), "data.resume.method")
		Expect(hint.Via).NotTo(BeEmpty(), "data.resume.via")
		sid := e.connect(ctx, e.C)
		resp, err := e.C.Call(ctx, sid, "tools/list", nil)
		Expect(err).NotTo(HaveOccurred())
		m, err := resp.Result()
		Expect(err).NotTo(HaveOccurred())
		var list struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
		}
		Expect(json.Unmarshal(m.Result, &list)).To(Succeed(), "tools/list result")
		for _, t := range list.Tools {
			if t.Name == hint.Method {
				Expect(t.InputSchema.Properties).To(HaveKey(hint.Via), "tool %s has no argument %q (data.resume.via)", t.Name, hint.Via)
				return
			}
		}
		Fail("data.resume.method " + hint.Method + " is not a tool the server lists")
	})
}

// expectEnvelope sends tools/list with a session id the server does not know
// and checks the answer is the 404 session-expired envelope.
func (e *Env) expectEnvelope(ctx context.Context, sid string) envelope {
	resp, err := e.C.Call(ctx, sid, "tools/list", nil)
	Expect(err).NotTo(HaveOccurred())
	if hint := resp.SessionID(); hint != "" && hint != sid {
		DeferCleanup(func(ctx SpecContext) { _, _ = e.C.Delete(ctx, hint) })
	}
	Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with unknown session id %q", sid)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	Expect(mt).To(Equal("application/json"), "Content-Type of the 404")
	var env envelope
	Expect(json.Unmarshal(resp.Body, &env)).To(Succeed(), "404 body %q is not JSON", resp.Body)
	Expect(env.JSONRPC).To(Equal("2.0"), "jsonrpc")
	Expect(string(env.ID)).To(Equal("null"), "id must be null")
	Expect(env.Error).NotTo(BeNil(), "error object")
	Expect(env.Error.Code).To(Equal(envelopeCode), "error.code")
	Expect(env.Error.Message).To(Equal(envelopeMessage), "error.message")
	Expect(env.Error.Data.Reason).To(Equal(envelopeReason), "error.data.reason")
	return env
}

// restartChecks registers the restart checks.
func restartChecks() {
	check("RESTART-404", nil, func(ctx context.Context, e *Env) {
		sid := e.connect(ctx, e.C)
		e.Logf("!! F-RESTART: restarting the target")
		Expect(TestContext.Restart(ctx)).To(Succeed(), "restart the target")
		e.tr.CloseIdleConnections()
		e.expectEnvelope(ctx, sid)
		e.expectWorks(ctx, e.C, e.connect(ctx, e.C))
	})

	check("RESTART-HINT", nil, func(ctx context.Context, e *Env) {
		stale := rand.Text()
		resp, err := e.C.Call(ctx, stale, "tools/list", nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Status).To(Equal(http.StatusNotFound), "tools/list with stale session id")
		fresh := resp.SessionID()
		Expect(fresh).NotTo(BeEmpty(), "the 404 carries no new Mcp-Session-Id")
		Expect(fresh).NotTo(Equal(stale))
		DeferCleanup(func(ctx SpecContext) { _, _ = e.C.Delete(ctx, fresh) })
		e.expectWorks(ctx, e.C, fresh)
	})
}
