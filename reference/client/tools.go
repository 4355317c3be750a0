package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolInfo is what the client keeps of a listed tool: its x-mcp-header
// bindings, or why it was excluded.
type toolInfo struct {
	bindings []paramBinding
	rejected error
}

// ListTools lists every tool, following pagination. Tools whose
// x-mcp-header annotations are malformed are left out (SEP-2243), with a
// warning; the client remembers them, and their bindings, for CallTool.
func (c *Client) ListTools(ctx context.Context) (tools []*mcp.Tool, err error) {
	err = c.withEra(ctx, func() (err error) {
		tools, err = c.listTools(ctx)
		return err
	})
	return tools, err
}

func (c *Client) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	known := map[string]toolInfo{}
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var r mcp.ListToolsResult
		if err := c.requestInto(ctx, "tools/list", params, &r); err != nil {
			return nil, err
		}
		for _, t := range r.Tools {
			if t == nil {
				continue
			}
			b, err := headerBindings(t.InputSchema)
			known[t.Name] = toolInfo{bindings: b, rejected: err}
			if err != nil {
				c.log.Warn("tool excluded: malformed x-mcp-header annotation", "tool", t.Name, "err", err)
				continue
			}
			out = append(out, t)
		}
		if r.NextCursor == "" || r.NextCursor == cursor {
			break
		}
		cursor = r.NextCursor
	}
	c.mu.Lock()
	c.tools = known
	c.mu.Unlock()
	return out, nil
}

// paramHeadersFor returns the Mcp-Param headers of a call of tool under the
// sessionless revision, listing the tools first if the client does not
// know it yet. Calling an excluded tool is an error.
func (c *Client) paramHeadersFor(ctx context.Context, tool string, args json.RawMessage) (http.Header, error) {
	if !c.modern() {
		return nil, nil
	}
	c.mu.Lock()
	info, ok := c.tools[tool]
	c.mu.Unlock()
	if !ok {
		if _, err := c.listTools(ctx); err != nil {
			return nil, fmt.Errorf("listing the tools to learn %s's x-mcp-header parameters: %w", tool, err)
		}
		c.mu.Lock()
		info = c.tools[tool]
		c.mu.Unlock()
	}
	if info.rejected != nil {
		return nil, fmt.Errorf("tool %s is excluded: %w", tool, info.rejected)
	}
	return paramHeaders(info.bindings, args), nil
}

func (c *Client) requestInto(ctx context.Context, method string, params, out any) error {
	raw, err := c.Request(ctx, method, params)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
