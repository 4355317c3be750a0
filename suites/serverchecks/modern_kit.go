package serverchecks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// What the checks of the sessionless revision (2026-07-28) share.

// OnlySessionlessRevision is why a check of the sessionless revision
// skips in a run of an earlier one.
const OnlySessionlessRevision = "not applicable: the behaviour belongs to protocol " + wire.SessionlessProtocolVersion + "; run with --protocol-version " + wire.SessionlessProtocolVersion

// Codes of the sessionless revision's errors.
const (
	codeMethodNotFound     = -32601
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// metaSubscriptionID tags a listen stream's messages with its request's id.
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// newKey is a fresh value for target.Key: the check's own count or resource.
func newKey() string { return rand.Text() }

// withKey returns v with every target.Key in its strings replaced by key.
func withKey(v any, key string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, target.Key, key)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = withKey(e, key)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withKey(e, key)
		}
		return out
	}
	return v
}

// argsWithKey is a tool's arguments with key in place of target.Key.
func argsWithKey(t target.Tool, key string) map[string]any {
	m, _ := withKey(t.Arguments, key).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// modernDo sends req and reads the whole answer, failing on a transport error.
func (e *env) modernDo(req *http.Request, what string) *wire.Response {
	resp, err := e.C.Do(req)
	e.Expect(err).NotTo(HaveOccurred(), "%s", what)
	return resp
}

// modernRequest builds a sessionless request on e.C with id (nil: the
// client's next) and no extension declared.
func (e *env) modernRequest(ctx context.Context, id any, method string, params map[string]any) *http.Request {
	var req *http.Request
	var err error
	if id == nil {
		req, err = e.C.NewModernRequest(ctx, method, params, nil)
	} else {
		req, err = e.C.NewModernRequestID(ctx, id, method, params, nil)
	}
	e.Expect(err).NotTo(HaveOccurred(), "%s", method)
	return req
}

// modernError expects resp to be an HTTP status error answer with a
// JSON-RPC error of code, and returns that error and the answer's id.
func (e *env) modernError(resp *wire.Response, what string, status, code int) (*wire.RPCError, json.RawMessage) {
	e.Expect(resp.Status).To(Equal(status), "%s: HTTP status (body %s)", what, excerptOf(resp))
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred(), "%s: HTTP %d, want a JSON-RPC error response in the body (%s)", what, resp.Status, excerptOf(resp))
	e.Expect(m.Error).NotTo(BeNil(), "%s: HTTP %d with a result %s, want error %d", what, resp.Status, m.Result, code)
	e.Expect(m.Error.Code).To(Equal(code), "%s: error code (message %q)", what, m.Error.Message)
	return m.Error, m.ID
}

// excerptOf is a short rendering of an answer's body for a message.
func excerptOf(resp *wire.Response) string {
	b := bytes.TrimSpace(resp.Body)
	if resp.IsSSE {
		var sb strings.Builder
		for _, ev := range resp.Events {
			sb.WriteString(ev.Data)
			sb.WriteString(" ")
		}
		b = []byte(strings.TrimSpace(sb.String()))
	}
	total := int64(len(b)) + resp.BodyLeftOut
	if total > 300 {
		return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(b[:min(len(b), 300)]), ""), total)
	}
	return string(b)
}

// callTool calls a tool sessionless and returns its result, failing the
// check on an error answer.
func (e *env) callTool(ctx context.Context, c *wire.Client, name string, args map[string]any) json.RawMessage {
	resp, err := c.CallModern(ctx, "tools/call", wire.ToolParams(name, args, ""), nil)
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s", name)
	m, err := resp.Result()
	e.Expect(err).NotTo(HaveOccurred(), "tools/call %s: HTTP %d (%s)", name, resp.Status, excerptOf(resp))
	e.Expect(m.Error).To(BeNil(), "tools/call %s answered an error", name)
	return m.Result
}

var firstInt = regexp.MustCompile(`-?\d+`)

// countOf reads a count from a tool result: structuredContent.count, or
// the first integer of its text.
func countOf(result json.RawMessage) (int64, bool) {
	var r struct {
		Structured struct {
			Count *int64 `json:"count"`
		} `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) == nil && r.Structured.Count != nil {
		return *r.Structured.Count, true
	}
	text, err := wire.ResultText(result)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(firstInt.FindString(text), 10, 64)
	return n, err == nil
}

// subscriptionOf is the _meta subscription id of a message's params or
// result, as JSON text ("" if none).
func subscriptionOf(m wire.Message) string {
	raw := m.Params
	if m.IsResponse() {
		raw = m.Result
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	return string(bytes.TrimSpace(p.Meta[metaSubscriptionID]))
}
