package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/conformance"
)

// connect serves the fixtures in memory to a client that answers sampling
// and elicitation, and records the elicitation schemas it was sent.
func connect(t *testing.T) (*mcp.ClientSession, *[]json.RawMessage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	opts := &mcp.ServerOptions{}
	conformance.Configure(opts)
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, opts)
	conformance.Register(srv, conformance.Options{Retry: time.Second})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var schemas []json.RawMessage
	cl := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			b, _ := json.Marshal(req.Params.RequestedSchema)
			schemas = append(schemas, b)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "u", "email": "u@example.com"}}, nil
		},
	})
	cs, err := cl.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &schemas
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.Content)
	return res, string(b)
}

func TestTools(t *testing.T) {
	cs, schemas := connect(t)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 14 {
		t.Errorf("%d tools, want 14", len(list.Tools))
	}
	for _, tool := range list.Tools {
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or no input schema", tool.Name)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			b, _ := json.Marshal(tool.InputSchema)
			for _, kw := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$defs":{"address"`, `"additionalProperties":false`, `"$anchor":"addressDef"`, `"allOf":[{"anyOf"`, `"if":{`, `"then":{`, `"else":{`} {
				if !strings.Contains(string(b), kw) {
					t.Errorf("json_schema_2020_12_tool schema %s lacks %s", b, kw)
				}
			}
		}
	}
	for name, want := range map[string]string{
		"test_simple_text":            `"type":"text"`,
		"test_image_content":          `"mimeType":"image/png"`,
		"test_audio_content":          `"mimeType":"audio/wav"`,
		"test_embedded_resource":      `"uri":"test://embedded-resource"`,
		"test_multiple_content_types": `"type":"resource"`,
		"test_sampling":               `LLM response: {\"type\":\"text\",\"text\":\"sampled\"}`,
		"test_elicitation":            `action=accept`,
	} {
		if _, got := call(t, cs, name, map[string]any{"prompt": "p"}); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %s in it", name, got, want)
		}
	}
	if res, _ := call(t, cs, "test_error_handling", nil); !res.IsError {
		t.Error("test_error_handling: not isError")
	}
	call(t, cs, "test_elicitation_sep1034_defaults", nil)
	call(t, cs, "test_elicitation_sep1330_enums", nil)
	if len(*schemas) != 3 || !strings.Contains(string((*schemas)[1]), `"default":95.5`) || !strings.Contains(string((*schemas)[2]), `"enumNames"`) {
		t.Errorf("elicitation schemas sent: %s", *schemas)
	}
}

func TestNotifications(t *testing.T) {
	cs, _ := connect(t)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// A tool without a stream of its own (in memory) still answers.
	for _, name := range []string{"test_tool_with_logging", "test_tool_with_progress", "test_reconnection"} {
		if _, got := call(t, cs, name, nil); !strings.Contains(got, "successfully") {
			t.Errorf("%s: %s", name, got)
		}
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	cs, _ := connect(t)
	ctx := context.Background()
	for uri, want := range map[string]string{
		"test://static-text":      `"text":"This is the content`,
		"test://static-binary":    `"blob":`,
		"test://template/42/data": `"text":"{\"id\":\"42\"`,
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if b, _ := json.Marshal(res.Contents); !strings.Contains(string(b), want) {
			t.Errorf("%s: %s, want %s in it", uri, b, want)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/a/b/data"}); err == nil {
		t.Error("a template URI with a / in its id was read")
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Error(err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "v1", "arg2": "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(p.Messages); !strings.Contains(string(b), "arg1='v1', arg2='v2'") {
		t.Errorf("prompt with arguments: %s", b)
	}
	c, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "pa"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Completion.Values, ","); got != "paris,park,party" {
		t.Errorf("completion of pa: %s", got)
	}
}
