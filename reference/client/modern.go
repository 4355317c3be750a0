package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// ModernProtocolVersion is the sessionless revision: no initialize, no
// session, no GET stream; every request names its version and the client's
// capabilities, and tasks come from the io.modelcontextprotocol/tasks
// extension, declared per request.
const ModernProtocolVersion = "2026-07-28"

// ProtocolVersions are the revisions the client speaks, oldest first.
var ProtocolVersions = []string{"2025-03-26", "2025-06-18", DefaultProtocolVersion, ModernProtocolVersion}

// CheckProtocolVersion returns an error naming the supported revisions if
// v is not one of them.
func CheckProtocolVersion(v string) error {
	if slices.Contains(ProtocolVersions, v) {
		return nil
	}
	return fmt.Errorf("protocol version %q is not supported; use one of %v", v, ProtocolVersions)
}

// ErrSessionless is returned by operations that need a session when the
// client speaks ModernProtocolVersion.
var ErrSessionless = errors.New(ModernProtocolVersion + " has no sessions: there is no session to end")

// Error codes of the sessionless revision.
const (
	// CodeMissingCapability: the request needs a client capability (such
	// as the tasks extension) the client did not declare.
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion: the server does not speak the request's
	// protocol version; data.supported lists the ones it does.
	CodeUnsupportedVersion = -32022
)

// modern reports whether the client speaks the sessionless revision.
func (c *Client) modern() bool { return c.revision() == ModernProtocolVersion }

// revision is the protocol revision the client speaks: Options'
// ProtocolVersion, or the older one Connect fell back to.
func (c *Client) revision() string { return c.proto.Load().(string) }

// discover is Connect under the sessionless revision: server/discover
// tells whether the server speaks it and declares the tasks extension. A
// server that answers with an older revision's error, or lists only older
// revisions the client speaks, gets the initialize handshake instead
// (fallBack reports which revision then).
func (c *Client) discover(ctx context.Context) (fallBack string, err error) {
	if _, err := c.current(); err == nil {
		return "", nil
	} else if errors.Is(err, ErrClosed) {
		return "", err
	}
	c.emit(StatusEvent{Status: Connecting, Reason: "server/discover (" + ModernProtocolVersion + ", no session)"})
	raw, err := c.modernRequest(ctx, "server/discover", map[string]any{})
	if err == nil {
		var d struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(raw, &d) != nil {
			err = fmt.Errorf("server/discover answered %.200s", raw)
		} else if _, ok := d.Capabilities.Extensions[wire.TasksExtension]; !ok {
			c.log.Warn("the server does not declare the tasks extension", "extension", wire.TasksExtension)
		}
	}
	if err != nil {
		if v := legacyFallback(err); v != "" {
			c.log.Info("the server does not speak "+ModernProtocolVersion+"; falling back to initialize", "version", v, "err", err)
			return v, nil
		}
		err = fmt.Errorf("server/discover: %w", err)
		c.emit(StatusEvent{Status: Disconnected, Err: err, Reason: "discover failed"})
		return "", err
	}
	c.mu.Lock()
	c.connected = true
	c.sess = session{version: ModernProtocolVersion}
	c.mu.Unlock()
	c.emit(StatusEvent{Status: Connected, ProtocolVersion: ModernProtocolVersion, Reason: "server/discover answered; no session"})
	return "", nil
}

// legacyFallback returns the revision to initialize with when server/discover
// failed in a way only a server of an older revision answers: a -32022
// that lists no sessionless revision the client speaks but an older one, a
// method-not-found, or a 400, 404 or 405 without a recognized error of the
// sessionless revision in it (servesLegacy). "" means
// the failure stands (a recognised error of the sessionless revision, a
// network error, a cancel).
func legacyFallback(err error) string {
	var rpc *RPCError
	switch {
	case errors.As(err, &rpc) && rpc.Code == CodeUnsupportedVersion:
		supported := unsupportedVersions(rpc)
		for _, v := range slices.Backward(ProtocolVersions) {
			if v != ModernProtocolVersion && slices.Contains(supported, v) {
				return v
			}
		}
		return ""
	case errors.As(err, &rpc) && rpc.Code == -32601:
		return DefaultProtocolVersion
	case servesLegacy(err):
		return DefaultProtocolVersion
	}
	return ""
}

// unsupportedVersions returns data.supported of a -32022.
func unsupportedVersions(e *RPCError) []string {
	var data struct {
		Supported []string `json:"supported"`
	}
	json.Unmarshal(e.Data, &data)
	return data.Supported
}

// errBrokenStream: a response stream ended before its response. The
// sessionless revision has no resumption: the request is lost and re-issued.
var errBrokenStream = errors.New("response stream ended before the response")

// maxInputRounds bounds the InputRequiredResult rounds of one request.
const maxInputRounds = 16

// modernRequest sends one request of the sessionless revision and returns
// its result. It re-issues the request, as a new one with a new id, once
// after a broken response stream and once after a -32022 that lists this
// revision; an InputRequiredResult is answered (inputResponses, the
// requestState echoed as it came) in up to maxInputRounds rounds. JSON-RPC
// errors (whatever the HTTP status) are *RPCError.
func (c *Client) modernRequest(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	res, _, err := c.modernCall(ctx, method, params, nil)
	return res, err
}

// modernCall is modernRequest with extra headers; it also returns the id
// of the request that got the result.
func (c *Client) modernCall(ctx context.Context, method string, params map[string]any, extra http.Header) (json.RawMessage, string, error) {
	ctx, cancel := c.bind(ctx)
	defer cancel()
	reissued, renegotiated := false, false
	for round := 0; ; {
		res, id, err := c.modernOnce(ctx, method, params, extra)
		var rpc *RPCError
		switch {
		case errors.Is(err, errBrokenStream) && !reissued:
			reissued = true
			c.log.Info("response stream broken; re-issuing the request with a new id", "method", method, "err", err)
			continue
		case errors.As(err, &rpc) && rpc.Code == CodeUnsupportedVersion && !renegotiated && slices.Contains(unsupportedVersions(rpc), ModernProtocolVersion):
			renegotiated = true
			c.log.Info("the server rejected the protocol version but lists "+ModernProtocolVersion+"; retrying once", "method", method)
			continue
		case err != nil:
			return nil, "", err
		}
		var ir inputRequired
		if json.Unmarshal(res, &ir) != nil || ir.ResultType != "input_required" {
			return res, id, nil
		}
		if round++; round > maxInputRounds {
			return nil, "", fmt.Errorf("%s: the server still asks for input after %d rounds", method, maxInputRounds)
		}
		responses, err := c.fulfil(ctx, ir.InputRequests)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", method, err)
		}
		params = copyParams(params)
		params["inputResponses"] = responses
		delete(params, "requestState")
		if len(ir.RequestState) > 0 && string(ir.RequestState) != "null" {
			params["requestState"] = ir.RequestState
		}
	}
}

// copyParams returns a shallow copy of m: a retry's params must not leak into the
// caller's (another request must never carry this one's input).
func copyParams(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// modernOnce sends one request with a new id, declaring the client's
// capabilities and the tasks extension in _meta, and returns its result
// and id.
func (c *Client) modernOnce(ctx context.Context, method string, params map[string]any, extra http.Header) (json.RawMessage, string, error) {
	a, id, err := c.modernSend(ctx, method, params, extra)
	if err != nil {
		return nil, id, err
	}
	defer a.close()
	var m *message
	switch {
	case a.events != nil:
		m, err = c.modernStream(ctx, a, id)
	case a.status != http.StatusOK:
		return nil, id, modernRefusal(a)
	default:
		m, err = readJSONResponse(a, id)
	}
	if err != nil {
		return nil, id, err
	}
	if m.Error != nil {
		return nil, id, m.Error
	}
	return m.Result, id, nil
}

// modernRefusal is the error of a non-200 answer: the revision's errors
// come with 4xx statuses.
func modernRefusal(a *answer) error {
	var body struct {
		Error *RPCError `json:"error"`
	}
	if json.Unmarshal(a.body, &body) == nil && body.Error != nil {
		body.Error.HTTPStatus = a.status
		return body.Error
	}
	return unexpected(a)
}

// modernSend sends one request of the sessionless revision with a new id
// and returns its answer, unread, and the id.
func (c *Client) modernSend(ctx context.Context, method string, params map[string]any, extra http.Header) (*answer, string, error) {
	params = copyParams(params)
	meta := map[string]any{}
	if m, ok := params["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	caps := c.capabilities()
	caps["extensions"] = map[string]any{wire.TasksExtension: map[string]any{}}
	meta[wire.MetaProtocolVersion] = ModernProtocolVersion
	meta[wire.MetaClientCapabilities] = caps
	meta[wire.MetaClientInfo] = map[string]any{"name": c.opts.ClientName, "version": clientVersion}
	params["_meta"] = meta
	id := c.newID()
	hdr := http.Header{wire.HeaderMcpMethod: {method}}
	for _, k := range []string{"name", "uri", "taskId"} {
		if v, ok := params[k].(string); ok {
			hdr.Set(wire.HeaderMcpName, v)
			break
		}
	}
	for k, v := range extra {
		hdr[k] = v
	}
	a, err := c.sendHeaders(ctx, http.MethodPost, session{version: ModernProtocolVersion}, request(id, method, params), "", hdr)
	return a, id, err
}

// modernStream reads an SSE answer to its response; notifications on it
// go to OnNotification.
func (c *Client) modernStream(ctx context.Context, a *answer, id string) (*message, error) {
	for {
		ev, err := a.events.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, "request")
			}
			return nil, fmt.Errorf("request %s: %w (%v)", id, errBrokenStream, err)
		}
		var m message
		if json.Unmarshal([]byte(ev.Data), &m) != nil {
			continue
		}
		if m.isResponse() && m.hasID(id) {
			return &m, nil
		}
		if m.Method != "" && !m.isRequest() && c.opts.OnNotification != nil {
			c.cbMu.Lock()
			c.opts.OnNotification(Notification{Method: m.Method, Params: m.Params, Stream: "call", RequestID: id})
			c.cbMu.Unlock()
		}
	}
}

// modernTask is the extension's flat task: CreateTaskResult (resultType
// "task") and tasks/get, which carries the outcome inline.
type modernTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *RPCError       `json:"error"`
}

// createTaskModern sends the task-augmented tools/call of the extension.
func (c *Client) createTaskModern(ctx context.Context, name string, args json.RawMessage) (task, error) {
	hdr, err := c.paramHeadersFor(ctx, name, args)
	if err != nil {
		return task{}, err
	}
	raw, _, err := c.modernCall(ctx, "tools/call", map[string]any{"name": name, "arguments": args, "task": map[string]any{}}, hdr)
	if err != nil {
		return task{}, err
	}
	t, ok := asTask(raw)
	if !ok {
		return task{}, fmt.Errorf("tools/call declaring %s answered %.300s, not a CreateTaskResult (resultType \"task\")", wire.TasksExtension, raw)
	}
	return t, nil
}

// asTask reads the extension's flat CreateTaskResult (resultType "task").
func asTask(raw json.RawMessage) (task, bool) {
	var t modernTask
	if json.Unmarshal(raw, &t) != nil || t.ResultType != "task" || t.TaskID == "" {
		return task{}, false
	}
	return task{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, PollInterval: t.PollIntervalMs}, true
}
