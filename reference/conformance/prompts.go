package conformance

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func registerPrompts(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return messages(text("This is a simple prompt for testing.")), nil
		})

	srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments, substituted into its text.",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return messages(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"]))), nil
		})

	srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds the resource it is given.",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			if uri == "" {
				return nil, fmt.Errorf("resourceUri is required")
			}
			return messages(embedded(uri, "Embedded resource content for testing."), text("Please process the embedded resource above.")), nil
		})

	srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return messages(image(), text("Please analyze the image above.")), nil
		})
}

// messages makes a user message of each content.
func messages(content ...mcp.Content) *mcp.GetPromptResult {
	res := &mcp.GetPromptResult{}
	for _, c := range content {
		res.Messages = append(res.Messages, &mcp.PromptMessage{Role: "user", Content: c})
	}
	return res
}
