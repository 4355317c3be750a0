package client

import (
	"context"
	"encoding/json"
	"errors"
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
//
// Under the sessionless revision the call carries the Mcp-Param headers of
// its tool's x-mcp-header parameters (the tools are listed first if the
// client does not know them yet), and a broken response stream re-issues
// it once as a new request. A client of 2026-07-28 whose server restarted
// into another revision switches to it and calls once more (withEra).
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("tool arguments: %w", err)
	}
	var res *ToolResult
	err = c.withEra(ctx, func() (err error) {
		op := &operation{method: "tools/call", tool: name, args: objectArgs(raw)}
		if c.modern() {
			res, err = c.callModern(ctx, op)
		} else {
			res, err = c.callOp(ctx, op)
		}
		return err
	})
	return res, err
}

// ResumeCall reattaches to the call that was in flight when the previous
// client stopped (its stream resumed by Last-Event-ID) and returns its
// result; the notifications it missed are handed over first, once. If the
// session was replaced meanwhile, the call is lost (CallLostError) unless
// the server's resume hint names its tool: it is then issued again with the
// stored resume token. Under the sessionless revision, which resumes no
// stream, the call is re-issued as a new request.
func (c *Client) ResumeCall(ctx context.Context) (*ToolResult, error) {
	rec, ok := c.st.latestInFlight()
	if !ok {
		return nil, ErrNothingToResume
	}
	if c.modern() {
		if err := c.st.dropInFlight(rec.RequestID); err != nil {
			return nil, persistErr("call", err)
		}
		c.log.Info("re-issuing the interrupted call as a new request ("+ModernProtocolVersion+" resumes no stream)", "tool", rec.Tool, "was", rec.RequestID)
		return c.callModern(ctx, &operation{method: "tools/call", tool: rec.Tool, args: objectArgs(rec.Arguments)})
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
	var id string
	json.Unmarshal(resp.ID, &id)
	return c.callDone(op, id, resp.Result)
}

// callModern runs a call of the sessionless revision. It is stored in flight
// until its outcome, so that a killed client re-issues it (ResumeCall).
func (c *Client) callModern(ctx context.Context, op *operation) (*ToolResult, error) {
	if _, err := c.current(); err != nil {
		return nil, err
	}
	hdr, err := c.paramHeadersFor(ctx, op.tool, op.args)
	if err != nil {
		return nil, err
	}
	rec := InFlightCall{RequestID: c.newID(), Tool: op.tool, Arguments: op.args, Started: c.clk.Now()}
	rec.ProgressToken = "p-" + rec.RequestID
	if err := c.st.putInFlight(rec); err != nil {
		return nil, persistErr("call", err)
	}
	params := map[string]any{"name": op.tool, "arguments": op.args, "_meta": map[string]any{"progressToken": rec.ProgressToken}}
	raw, id, err := c.modernCall(ctx, "tools/call", params, hdr)
	if errors.Is(err, ErrClosed) {
		return nil, err // kept: the next client re-issues it
	}
	if derr := c.st.dropInFlight(rec.RequestID); derr != nil {
		return nil, errors.Join(err, persistErr("call", derr))
	}
	if err != nil {
		return nil, err
	}
	if t, ok := asTask(raw); ok {
		// The server made the call a task (the client declares the tasks
		// extension): it is kept and polled as CallToolTask's is.
		return c.adoptTask(ctx, op.tool, op.args, t)
	}
	return c.callDone(op, id, raw)
}

// callDone decodes a call's result and stores it, with its resume tokens.
func (c *Client) callDone(op *operation, id string, raw json.RawMessage) (*ToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decoding tool result: %w", err)
	}
	out := &ToolResult{RequestID: id, Tool: op.tool, Raw: raw, Result: &res}
	if err := c.st.setJSON(KeyLastResult, LastResult{Tool: op.tool, RequestID: id, Result: raw, At: c.clk.Now()}); err != nil {
		return out, persistErr("last result", err)
	}
	return out, c.remember(raw)
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
