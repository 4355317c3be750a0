package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// accept answers every elicitation with content.
func accept(content map[string]any) func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

// TestModernToolHeaders: a call carries the Mcp-Param headers of its tool's
// x-mcp-header parameters, learnt from one tools/list the client makes
// itself; a tool with a malformed annotation is left out of ListTools and
// never called.
func TestModernToolHeaders(t *testing.T) {
	s := newModernServer(t)
	s.tools = []map[string]any{
		{"name": "routed", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"region": map[string]any{"type": "string", "x-mcp-header": "Region"}, "query": map[string]any{"type": "string"}}}},
		{"name": "broken", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{
			"score": map[string]any{"type": "number", "x-mcp-header": "Score"}}}},
	}
	c := connectTo(t, s.options())
	if _, err := c.CallTool(ctx(t), "routed", map[string]any{"region": "eu west", "query": "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx(t), "routed", map[string]any{"region": "us"}); err != nil {
		t.Fatal(err)
	}
	calls := s.requests("tools/call")
	if got := calls[0].Header.Values("Mcp-Param-Region"); len(got) != 1 || got[0] != "eu west" || calls[0].Header.Get("Mcp-Param-Query") != "" {
		t.Fatalf("first call's headers %v", calls[0].Header)
	}
	if got := calls[1].Header.Get("Mcp-Param-Region"); got != "us" {
		t.Fatalf("second call's Mcp-Param-Region %q", got)
	}
	if n := len(s.requests("tools/list")); n != 1 {
		t.Fatalf("%d tools/list, want one (the client learns the annotations once)", n)
	}
	if _, err := c.Request(ctx(t), "tools/call", map[string]any{"name": "routed", "arguments": map[string]any{"region": "ap"}}); err != nil {
		t.Fatal(err)
	}
	if got := s.requests("tools/call")[2].Header.Get("Mcp-Param-Region"); got != "ap" {
		t.Fatalf("a tools/call through Request: Mcp-Param-Region %q", got)
	}
	tools, err := c.ListTools(ctx(t))
	if err != nil || len(tools) != 1 || tools[0].Name != "routed" {
		t.Fatalf("ListTools kept %v (%v), want routed only", tools, err)
	}
	_, err = c.CallTool(ctx(t), "broken", map[string]any{"score": 1})
	if err == nil || !strings.Contains(err.Error(), "tool broken is excluded") {
		t.Fatalf("calling the excluded tool: %v", err)
	}
	if n := len(s.requests("tools/call")); n != 3 {
		t.Fatalf("%d tools/call, want 3 (the excluded tool never called)", n)
	}
}

// TestModernInputRequired: an InputRequiredResult is answered and the
// request sent again with a new id, the inputResponses and the requestState
// exactly as it came (none when none came); another request carries
// neither. A request the client does not answer fails the call, naming it.
func TestModernInputRequired(t *testing.T) {
	s := newModernServer(t)
	const state = `{"nonce":"n-1","opaque":[1,2]}`
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		var name string
		m.arg("name", &name)
		if m.Method != "tools/call" || name == "plain" {
			return false
		}
		if _, retried := m.Params["inputResponses"]; retried {
			writeJSON(w, m.ID, map[string]any{"resultType": "complete", "content": []any{}}, nil)
			return true
		}
		ir := map[string]any{"resultType": "input_required", "inputRequests": map[string]any{
			"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "ok?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}, "level": map[string]any{"type": "integer", "default": 3}}}}},
			"where": map[string]any{"method": "roots/list", "params": map[string]any{}},
		}}
		switch name {
		case "stateful":
			ir["requestState"] = state
		case "sampling":
			ir["inputRequests"] = map[string]any{"llm": map[string]any{"method": "sampling/createMessage", "params": map[string]any{"messages": []any{}, "maxTokens": 5}}}
		}
		writeJSON(w, m.ID, ir, nil)
		return true
	}
	o := s.options()
	o.OnElicit = accept(map[string]any{"confirmed": true})
	o.Roots = []*mcp.Root{{URI: "file:///work", Name: "work"}}
	c := connectTo(t, o)
	for _, tool := range []string{"stateful", "plain", "stateless"} {
		if _, err := c.CallTool(ctx(t), tool, nil); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	calls := s.requests("tools/call")
	if len(calls) != 5 {
		t.Fatalf("%d tools/call, want 5", len(calls))
	}
	first, retry, plain, noState := calls[0], calls[1], calls[2], calls[4]
	if string(first.ID) == string(retry.ID) {
		t.Fatalf("the retry reused id %s", first.ID)
	}
	var echoed string
	if !retry.arg("requestState", &echoed) || echoed != state {
		t.Fatalf("requestState sent back as %q, want %q", echoed, state)
	}
	var responses map[string]map[string]any
	retry.arg("inputResponses", &responses)
	content, _ := responses["confirm"]["content"].(map[string]any)
	if responses["confirm"]["action"] != "accept" || content["confirmed"] != true || content["level"] != float64(3) {
		t.Fatalf("elicitation answer %v, want accept with confirmed and the default level", responses["confirm"])
	}
	if roots, _ := responses["where"]["roots"].([]any); len(roots) != 1 {
		t.Fatalf("roots answer %v", responses["where"])
	}
	if _, has := plain.Params["inputResponses"]; has || plain.Params["requestState"] != nil {
		t.Fatalf("an unrelated call carried another's input: %v", plain.Params)
	}
	if _, has := noState.Params["requestState"]; has {
		t.Fatalf("requestState sent although none came: %s", noState.Params["requestState"])
	}
	var meta map[string]map[string]json.RawMessage
	first.arg("_meta", &meta)
	if caps := meta["io.modelcontextprotocol/clientCapabilities"]; caps["elicitation"] == nil || caps["roots"] == nil || caps["sampling"] != nil {
		t.Fatalf("declared capabilities %v, want elicitation and roots only", caps)
	}
	_, err := c.CallTool(ctx(t), "sampling", nil)
	if err == nil || !strings.Contains(err.Error(), `input "llm" (sampling/createMessage)`) || !strings.Contains(err.Error(), "not offered") {
		t.Fatalf("a sampling request with no OnSample: %v", err)
	}
}

// TestStreamElicitation: under 2025-11-25 the server's elicitation/create
// on a call's stream is answered with a POST of the handler's result, the
// schema's defaults filled in; initialize declares what the client answers.
func TestStreamElicitation(t *testing.T) {
	s := newScripted(t)
	answered := make(chan map[string]any, 1)
	var mu sync.Mutex
	var callID json.RawMessage
	s.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		switch method {
		case "tools/call":
			mu.Lock()
			callID = id
			mu.Unlock()
			sseHeader(w)
			sseEvent(w, "e1", `{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30}}}}}`)
			select {
			case res := <-answered:
				data, _ := json.Marshal(res)
				mu.Lock()
				sseEvent(w, "e2", `{"jsonrpc":"2.0","id":`+string(callID)+`,"result":{"content":[{"type":"text","text":`+string(mustQuote(string(data)))+`}]}}`)
				mu.Unlock()
			case <-r.Context().Done():
			}
			return true
		case "":
			var resp struct {
				ID     string         `json:"id"`
				Result map[string]any `json:"result"`
			}
			json.NewDecoder(r.Body).Decode(&resp)
			w.WriteHeader(http.StatusAccepted)
			answered <- resp.Result
			return true
		}
		return false
	}
	o := s.options(nil)
	o.OnElicit = accept(map[string]any{"age": 41})
	c := connectTo(t, o)
	res, err := c.CallTool(ctx(t), "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Result.Content[0].(*mcp.TextContent).Text; got != `{"action":"accept","content":{"age":41,"name":"John Doe"}}` {
		t.Fatalf("the server got %s", got)
	}
	var params struct{ Capabilities map[string]any }
	s.mu.Lock()
	json.Unmarshal(s.init, &params)
	s.mu.Unlock()
	if len(params.Capabilities) != 1 || params.Capabilities["elicitation"] == nil {
		t.Fatalf("initialize declared %v, want elicitation only", params.Capabilities)
	}
}

func mustQuote(s string) []byte {
	data, _ := json.Marshal(s)
	return data
}
