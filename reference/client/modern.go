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

// ProtocolVersions are the revisions the client speaks.
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
var ErrSessionless = errors.New(ModernProtocolVersion + " has no sessions: the client runs tool calls there only as tasks (CallToolTask, ResumeTask)")

// CodeMissingCapability is the extension's error for a task request from a
// client that did not declare the extension.
const CodeMissingCapability = -32021

// modern reports whether the client speaks the sessionless revision.
func (c *Client) modern() bool { return c.opts.ProtocolVersion == ModernProtocolVersion }

// discover is Connect under the sessionless revision: server/discover
// tells whether the server speaks it and declares the tasks extension.
func (c *Client) discover(ctx context.Context) error {
	if _, err := c.current(); err == nil {
		return nil
	} else if errors.Is(err, ErrClosed) {
		return err
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
		err = fmt.Errorf("server/discover: %w", err)
		c.emit(StatusEvent{Status: Disconnected, Err: err, Reason: "discover failed"})
		return err
	}
	c.mu.Lock()
	c.connected = true
	c.sess = session{version: ModernProtocolVersion}
	c.mu.Unlock()
	c.emit(StatusEvent{Status: Connected, ProtocolVersion: ModernProtocolVersion, Reason: "server/discover answered; no session"})
	return nil
}

// modernRequest sends one request of the sessionless revision, declaring
// the tasks extension, and returns its result; JSON-RPC errors (whatever
// the HTTP status) are *RPCError.
func (c *Client) modernRequest(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	ctx, cancel := c.bind(ctx)
	defer cancel()
	params["_meta"] = map[string]any{
		wire.MetaProtocolVersion:    ModernProtocolVersion,
		wire.MetaClientCapabilities: map[string]any{"extensions": map[string]any{wire.TasksExtension: map[string]any{}}},
		wire.MetaClientInfo:         map[string]any{"name": c.opts.ClientName, "version": "0"},
	}
	id := c.newID()
	hdr := http.Header{wire.HeaderMcpMethod: {method}}
	for _, k := range []string{"name", "taskId"} {
		if v, ok := params[k].(string); ok {
			hdr.Set(wire.HeaderMcpName, v)
			break
		}
	}
	a, err := c.sendHeaders(ctx, http.MethodPost, session{version: ModernProtocolVersion}, request(id, method, params), "", hdr)
	if err != nil {
		return nil, err
	}
	defer a.close()
	var m *message
	switch {
	case a.events != nil:
		m, err = c.modernStream(ctx, a, id)
	case a.status != http.StatusOK:
		// The extension's errors come with 4xx statuses.
		var body struct {
			Error *RPCError `json:"error"`
		}
		if json.Unmarshal(a.body, &body) == nil && body.Error != nil {
			return nil, body.Error
		}
		return nil, unexpected(a)
	default:
		m, err = readJSONResponse(a, id)
	}
	if err != nil {
		return nil, err
	}
	if m.Error != nil {
		return nil, m.Error
	}
	return m.Result, nil
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
			return nil, fmt.Errorf("stream of request %s ended before its response: %w", id, err)
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
	raw, err := c.modernRequest(ctx, "tools/call", map[string]any{"name": name, "arguments": args, "task": map[string]any{}})
	if err != nil {
		return task{}, err
	}
	var t modernTask
	if err := json.Unmarshal(raw, &t); err != nil || t.ResultType != "task" || t.TaskID == "" {
		return task{}, fmt.Errorf("tools/call declaring %s answered %.300s, not a CreateTaskResult (resultType \"task\")", wire.TasksExtension, raw)
	}
	return task{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, PollInterval: t.PollIntervalMs}, nil
}
