package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noArgs is the input schema of a tool without arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{}}`)

// oneString is the input schema of a tool with one optional string argument.
func oneString(name, about string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string","description":%q}}}`, name, about))
}

// schema2020 keeps the JSON Schema 2020-12 keywords the suite looks for
// ($schema, $defs, additionalProperties; from 2026-07-28 also $anchor,
// allOf/anyOf and if/then/else) as written.
var schema2020 = json.RawMessage(`{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`)

func registerTools(srv *mcp.Server, opts Options) {
	fixed := func(name, about string, content ...mcp.Content) {
		srv.AddTool(&mcp.Tool{Name: name, Description: about, InputSchema: noArgs},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: content}, nil
			})
	}
	fixed("test_simple_text", "Returns a simple text response.", text("This is a simple text response for testing."))
	fixed("test_image_content", "Returns an image (a 1x1 PNG).", image())
	fixed("test_audio_content", "Returns audio (a short WAV).", &mcp.AudioContent{Data: wavSilence, MIMEType: "audio/wav"})
	fixed("test_embedded_resource", "Returns an embedded text resource.",
		embedded("test://embedded-resource", "This is an embedded resource content."))
	fixed("test_multiple_content_types", "Returns text, an image and an embedded resource.",
		text("Multiple content types test:"), image(),
		embedded("test://mixed-content-resource", `{"test":"data","value":123}`))
	srv.AddTool(&mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Has a JSON Schema 2020-12 input schema ($schema, $defs, additionalProperties).", InputSchema: schema2020},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{text("ok")}}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "test_error_handling", Description: "Always fails, as a tool error (isError).", InputSchema: noArgs},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("This tool intentionally returns an error for testing")}}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "test_tool_with_logging", Description: "Sends three log messages while it runs.", InputSchema: noArgs},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "test_tool_with_logging", Data: msg}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text("Tool with logging executed successfully")}}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100 (with the call's progress token).", InputSchema: noArgs},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				for _, p := range []float64{0, 50, 100} {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text("Tool with progress executed successfully")}}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "test_sampling", Description: "Asks the client to sample an LLM with the prompt.", InputSchema: oneString("prompt", "the prompt to send")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Prompt string }
			if err := unmarshalArgs(req, &args); err != nil {
				return nil, err
			}
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				MaxTokens: 100,
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: text(args.Prompt)}},
			})
			if err != nil {
				return nil, err
			}
			reply, _ := json.Marshal(res.Content)
			return &mcp.CallToolResult{Content: []mcp.Content{text("LLM response: " + string(reply))}}, nil
		})

	elicit := func(name, about string, schema json.RawMessage) {
		srv.AddTool(&mcp.Tool{Name: name, Description: about, InputSchema: oneString("message", "the message to show the user")},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args struct{ Message string }
				if err := unmarshalArgs(req, &args); err != nil {
					return nil, err
				}
				if args.Message == "" {
					args.Message = "Please provide your information"
				}
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: args.Message, RequestedSchema: schema})
				if err != nil {
					return nil, err
				}
				content, _ := json.Marshal(res.Content)
				return &mcp.CallToolResult{Content: []mcp.Content{text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content))}}, nil
			})
	}
	elicit("test_elicitation", "Asks the user for a username and an email.", elicitUser)
	elicit("test_elicitation_sep1034_defaults", "Asks the user for values of every primitive type, each with a default (SEP-1034).", elicitDefaults)
	elicit("test_elicitation_sep1330_enums", "Asks the user to choose from enums in every form (SEP-1330).", elicitEnums)

	srv.AddTool(&mcp.Tool{Name: "test_reconnection", Description: "Closes its call's SSE stream on purpose (with a retry hint), then answers: the client resumes the stream with Last-Event-ID to get the result (SSE polling).", InputSchema: noArgs},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: opts.Retry})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text("Reconnection test completed successfully")}}, nil
		})
}

var elicitUser = json.RawMessage(`{"type":"object","properties":{
	"username":{"type":"string","description":"User's response"},
	"email":{"type":"string","description":"User's email address"}},
	"required":["username","email"]}`)

var elicitDefaults = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","description":"User name","default":"John Doe"},
	"age":{"type":"integer","description":"User age","default":30},
	"score":{"type":"number","description":"User score","default":95.5},
	"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","description":"Verification status","default":true}}}`)

var elicitEnums = json.RawMessage(`{"type":"object","properties":{
	"untitledSingle":{"type":"string","description":"Choose an option","enum":["option1","option2","option3"]},
	"titledSingle":{"type":"string","description":"Choose a titled option","oneOf":[
		{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
	"legacyEnum":{"type":"string","description":"Choose a legacy option","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
	"untitledMulti":{"type":"array","description":"Choose options","items":{"type":"string","enum":["option1","option2","option3"]}},
	"titledMulti":{"type":"array","description":"Choose titled options","items":{"anyOf":[
		{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)

// unmarshalArgs decodes a call's arguments, if any, into v.
func unmarshalArgs(req *mcp.CallToolRequest, v any) error {
	if len(req.Params.Arguments) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params.Arguments, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func image() *mcp.ImageContent { return &mcp.ImageContent{Data: pngPixel, MIMEType: "image/png"} }

func embedded(uri, body string) *mcp.EmbeddedResource {
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: body}}
}
