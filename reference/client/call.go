package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolResult is the outcome of a tool call.
type ToolResult struct {
	RequestID string
	Tool      string
	// Raw is the result exactly as the server sent it.
	Raw    json.RawMessage
	Result *mcp.CallToolResult
}

// CallTool calls a tool with a progress token. Its notifications go to
// OnNotification as they come. While it runs it is stored as in flight, with
// its stream's position, so that a restarted client can ResumeCall it.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	if c.modern() {
		return nil, ErrSessionless
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("tool arguments: %w", err)
	}
	return c.callOp(ctx, &operation{method: "tools/call", tool: name, args: objectArgs(raw)})
}

// ResumeCall reattaches to the call that was in flight when the previous
// client stopped (its stream resumed by Last-Event-ID) and returns its
// result; the notifications it missed are handed over first, once. If the
// session was replaced meanwhile, the call is lost (CallLostError) unless
// the server's resume hint names its tool: it is then issued again with the
// stored resume token.
func (c *Client) ResumeCall(ctx context.Context) (*ToolResult, error) {
	if c.modern() {
		return nil, fmt.Errorf("%w; no task is stored to resume", ErrSessionless)
	}
	rec, ok := c.st.latestInFlight()
	if !ok {
		return nil, ErrNothingToResume
	}
	sess, err := c.current()
	if err != nil {
		return nil, err
	}
	op := &operation{method: "tools/call", tool: rec.Tool, args: objectArgs(rec.Arguments)}
	if rec.SessionID != sess.id || rec.LastEventID == "" {
		if err := c.st.dropInFlight(rec.RequestID); err != nil {
			return nil, persistErr("call", err)
		}
		cause := fmt.Errorf("its session %s is gone", rec.SessionID)
		if rec.SessionID == sess.id {
			cause = fmt.Errorf("no event of its stream was handled, so there is nothing to resume from")
		}
		if !c.applyHint(op) {
			return nil, &CallLostError{RequestID: rec.RequestID, Tool: rec.Tool, Cause: cause}
		}
		c.log.Info("re-issuing the interrupted call with the stored resume token", "tool", rec.Tool)
		return c.callOp(ctx, op)
	}
	op.resume = &rec
	return c.callOp(ctx, op)
}

func (c *Client) callOp(ctx context.Context, op *operation) (*ToolResult, error) {
	resp, err := c.do(ctx, op)
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, fmt.Errorf("decoding tool result: %w", err)
	}
	var id string
	json.Unmarshal(resp.ID, &id)
	out := &ToolResult{RequestID: id, Tool: op.tool, Raw: resp.Result, Result: &res}
	if err := c.st.setJSON(KeyLastResult, LastResult{Tool: op.tool, RequestID: id, Result: resp.Result, At: c.clk.Now()}); err != nil {
		return out, persistErr("last result", err)
	}
	return out, c.remember(resp.Result)
}

// remember keeps the resume tokens of a result as conversation state.
func (c *Client) remember(result json.RawMessage) error {
	var r struct {
		Structured map[string]json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.Structured) == 0 {
		return nil
	}
	conv := c.st.conversation()
	changed := false
	c.mu.Lock()
	for field := range c.watch {
		var tok string
		if json.Unmarshal(r.Structured[field], &tok) == nil && tok != "" && conv[field] != tok {
			conv[field] = tok
			changed = true
		}
	}
	c.mu.Unlock()
	if !changed {
		return nil
	}
	if err := c.st.setJSON(KeyConversation, conv); err != nil {
		return persistErr("conversation", err)
	}
	return nil
}
