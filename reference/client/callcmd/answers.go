package callcmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// answerFlags say how call answers the server's requests (elicitation,
// sampling, roots): a command line tool answers them from its flags, the
// same way every time, and declares only the capabilities it was given.
type answerFlags struct {
	elicit, elicitContent, sample string
	roots                         rootList
}

// rootList is a repeatable --root.
type rootList []string

func (r *rootList) String() string     { return strings.Join(*r, ",") }
func (r *rootList) Set(v string) error { *r = append(*r, v); return nil }

func (a *answerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.elicit, "elicit", "", "answer the server's elicitation requests with this action: accept, decline or cancel (declares elicitation; default: refused)")
	fs.StringVar(&a.elicitContent, "elicit-content", "", "JSON object: the content of an accepted elicitation; properties it leaves out get their schema default")
	fs.StringVar(&a.sample, "sample", "", "answer the server's sampling requests with this text, as the assistant (declares sampling; default: refused)")
	fs.Var(&a.roots, "root", "a root URI to answer roots/list with (repeatable; declares roots)")
}

// check validates the flags.
func (a *answerFlags) check() error {
	switch a.elicit {
	case "", "accept", "decline", "cancel":
	default:
		return fmt.Errorf("--elicit must be accept, decline or cancel, got %q", a.elicit)
	}
	if a.elicitContent != "" {
		if a.elicit != "accept" {
			return fmt.Errorf("--elicit-content needs --elicit accept")
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(a.elicitContent), &obj); err != nil || obj == nil {
			return fmt.Errorf("--elicit-content must be a JSON object, got %q", a.elicitContent)
		}
	}
	return nil
}

// apply sets the client's handlers.
func (a *answerFlags) apply(o *client.Options) {
	if a.elicit != "" {
		o.OnElicit = func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			res := &mcp.ElicitResult{Action: a.elicit}
			if a.elicit == "accept" {
				res.Content = map[string]any{}
				json.Unmarshal([]byte(a.elicitContent), &res.Content)
			}
			return res, nil
		}
	}
	if a.sample != "" {
		o.OnSample = func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "mcp-conform-call", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: a.sample}}, nil
		}
	}
	if len(a.roots) > 0 {
		for _, uri := range a.roots {
			o.Roots = append(o.Roots, &mcp.Root{URI: uri, Name: path.Base(uri)})
		}
	}
}
