// Package conformance adds to a server the fixtures that the official MCP
// conformance suite (@modelcontextprotocol/conformance) expects of the
// server it checks: the test_* tools, the test:// resources and template,
// the test_* prompts, completion and resource subscriptions. Names, contents
// and schemas follow that suite's scenarios; the reference server adds them
// only when asked (mcp-conform reference-server --conformance-tools).
package conformance

import (
	"context"
	"encoding/base64"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures Configure and Register.
type Options struct {
	// Retry is the retry hint test_reconnection sends before it closes its
	// call's stream.
	Retry time.Duration
}

// Configure sets the server options the fixtures need: completion and
// resource subscription handlers (the go-sdk declares the capabilities).
func Configure(o *mcp.ServerOptions) {
	o.CompletionHandler = complete
	o.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

// ConfigureStateless is Configure for the sessionless revision, which has
// no resources/subscribe: a client follows resources with
// subscriptions/listen there.
func ConfigureStateless(o *mcp.ServerOptions) {
	o.CompletionHandler = complete
}

// Register adds every tool, resource and prompt to srv.
func Register(srv *mcp.Server, opts Options) {
	registerTools(srv, opts)
	registerResources(srv)
	registerPrompts(srv)
}

// pngPixel is a 1x1 PNG.
var pngPixel = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

// wavSilence is a WAV file of one silent 8 kHz, 8-bit sample.
var wavSilence = mustBase64("UklGRiUAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQEAAACA")

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// complete answers completion/complete with the values that start with
// the argument's value, out of a fixed list.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	values := []string{}
	for _, v := range []string{"paris", "park", "party", "test", "testing"} {
		if strings.HasPrefix(v, req.Params.Argument.Value) {
			values = append(values, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
