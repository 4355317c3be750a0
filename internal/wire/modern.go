package wire

import (
	"context"
	"net/http"
)

// The sessionless revision (2026-07-28): no initialize and no session;
// every request names its version in the MCP-Protocol-Version header and
// in _meta, with the client's capabilities, and repeats its method (and
// the name it acts on) in headers.
const (
	HeaderMcpMethod        = "Mcp-Method"
	HeaderMcpName          = "Mcp-Name"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	// TasksExtension is the extension that carries tasks from 2026-07-28 on.
	TasksExtension = "io.modelcontextprotocol/tasks"
)

// CallModern sends a request of the sessionless revision c.ProtocolVersion
// with caps as the client's capabilities (nil: none) and returns the answer.
func (c *Client) CallModern(ctx context.Context, method string, params map[string]any, caps map[string]any) (*Response, error) {
	req, err := c.NewModernRequest(ctx, method, params, caps)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// OpenModern sends a request of the sessionless revision and returns its
// SSE stream (a call's notifications, then its response; or a
// subscriptions/listen stream); a non-SSE answer is a *StatusError.
func (c *Client) OpenModern(ctx context.Context, method string, params map[string]any, caps map[string]any) (*Stream, error) {
	req, err := c.NewModernRequest(ctx, method, params, caps)
	if err != nil {
		return nil, err
	}
	return c.Open(req)
}

// NewModernRequest builds the POST of a sessionless request: params'
// _meta names c.ProtocolVersion, the client and caps (nil: none), and the
// headers repeat the version, the method and the name it acts on
// (params.name, taskId or uri).
func (c *Client) NewModernRequest(ctx context.Context, method string, params map[string]any, caps map[string]any) (*http.Request, error) {
	return c.NewModernRequestID(ctx, c.nextID.Add(1), method, params, caps)
}

// NewModernRequestID is NewModernRequest with the JSON-RPC id given (a
// string, or a json.Number for an integer beyond float64).
func (c *Client) NewModernRequestID(ctx context.Context, id any, method string, params map[string]any, caps map[string]any) (*http.Request, error) {
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[MetaProtocolVersion] = c.ProtocolVersion
	meta[MetaClientCapabilities] = caps
	meta[MetaClientInfo] = map[string]any{"name": "mcp-conform", "version": "0"}
	params["_meta"] = meta
	body := map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	req, err := c.NewHTTPRequest(ctx, http.MethodPost, "", body)
	if err != nil {
		return nil, err
	}
	req.Header.Set(HeaderProtocolVersion, c.ProtocolVersion)
	req.Header.Set(HeaderMcpMethod, method)
	for _, k := range []string{"name", "taskId", "uri"} {
		if v, ok := params[k].(string); ok {
			req.Header.Set(HeaderMcpName, v)
			break
		}
	}
	return req, nil
}

// DeclaringTasks is the client capabilities that declare the tasks extension.
func DeclaringTasks() map[string]any {
	return map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}
}
