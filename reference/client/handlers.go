package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientVersion is sent in clientInfo.
const clientVersion = "0.1.0"

// The server's requests to the client: on a call's stream under the
// session revisions, as the inputRequests of an InputRequiredResult under
// the sessionless one. Each is answered by its Options handler; the
// capability is declared only when the handler is set.
const (
	methodElicit    = "elicitation/create"
	methodSample    = "sampling/createMessage"
	methodListRoots = "roots/list"
)

// capabilities returns the client capabilities to declare: one per
// handler set in Options.
func (c *Client) capabilities() map[string]any {
	caps := map[string]any{}
	if c.opts.OnElicit != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if c.opts.OnSample != nil {
		caps["sampling"] = map[string]any{}
	}
	if c.opts.Roots != nil {
		caps["roots"] = map[string]any{}
	}
	return caps
}

// errNotOffered: a server request whose capability was not declared.
var errNotOffered = errors.New("not offered by this client")

// serve answers one server request with its handler's result.
func (c *Client) serve(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch {
	case method == "ping":
		return map[string]any{}, nil
	case method == methodElicit && c.opts.OnElicit != nil:
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("decoding %s params: %w", method, err)
		}
		res, err := c.opts.OnElicit(ctx, &p)
		if err != nil {
			return nil, err
		}
		if res.Action == "accept" {
			res.Content = withDefaults(p.RequestedSchema, res.Content)
		}
		return res, nil
	case method == methodSample && c.opts.OnSample != nil:
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("decoding %s params: %w", method, err)
		}
		return c.opts.OnSample(ctx, &p)
	case method == methodListRoots && c.opts.Roots != nil:
		return &mcp.ListRootsResult{Roots: c.opts.Roots}, nil
	}
	return nil, fmt.Errorf("%s: %w", method, errNotOffered)
}

// withDefaults fills the properties an accepted form left out with their
// schema defaults (SEP-1034), so the server gets what the user saw.
func withDefaults(schema any, content map[string]any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	data, err := json.Marshal(schema)
	if err != nil || json.Unmarshal(data, &s) != nil {
		return content
	}
	for name, p := range s.Properties {
		if _, set := content[name]; set || len(p.Default) == 0 {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = p.Default
	}
	return content
}

// answerServer answers a server-to-client request that came on a stream
// (the session revisions), with a POST of the response.
func (c *Client) answerServer(ctx context.Context, sess session, m *message) {
	resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	res, err := c.serve(ctx, m.Method, m.Params)
	switch {
	case errors.Is(err, errNotOffered):
		resp["error"] = RPCError{Code: -32601, Message: "method not supported by this client: " + m.Method}
	case err != nil:
		resp["error"] = RPCError{Code: -32603, Message: err.Error()}
	default:
		resp["result"] = res
	}
	if a, err := c.send(ctx, http.MethodPost, sess, resp, ""); err == nil {
		a.close()
	}
}

// inputRequired is an InputRequiredResult (SEP-2322): the server needs the
// client's input before it can answer, and the request is sent again with
// it. requestState is opaque and goes back exactly as it came.
type inputRequired struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState"`
}

// inputRequest is one server request inside an InputRequiredResult.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fulfil answers every input request; one the client cannot answer fails
// the request, naming it.
func (c *Client) fulfil(ctx context.Context, reqs map[string]inputRequest) (map[string]any, error) {
	out := make(map[string]any, len(reqs))
	for key, r := range reqs {
		res, err := c.serve(ctx, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("the server asks for input %q (%s): %w", key, r.Method, err)
		}
		out[key] = res
	}
	return out, nil
}
