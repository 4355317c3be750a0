package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sessionless revision (2026-07-28) has no server-to-client requests:
// a tool that needs the client's input answers with an InputRequiredResult
// (SEP-2322) and the client calls again with inputResponses and the
// requestState it was given. Each tool below checks that the client
// declared the capability its input needs (-32021 if not).

// StatelessOptions configures RegisterStateless.
type StatelessOptions struct {
	// Principal is the client the server acts for; every requestState is
	// bound to it.
	Principal string
	Sealer    *Sealer
}

// RegisterStateless adds the fixtures the suite expects only of the
// sessionless revision: the test_input_required_result_* tools and
// prompt, and the diagnostic tools of its server-stateless scenario.
func RegisterStateless(srv *mcp.Server, opts StatelessOptions) {
	r := &irr{StatelessOptions: opts}
	add := func(name, about string, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, Description: about, InputSchema: noArgs}, h)
	}
	add("test_input_required_result_elicitation", "Asks for the user's name (elicitation, as an InputRequiredResult), then greets them.", r.elicitation)
	add("test_input_required_result_sampling", "Asks the client's LLM the capital of France (sampling, as an InputRequiredResult), then returns its answer.", r.sampling)
	add("test_input_required_result_list_roots", "Asks for the client's roots (as an InputRequiredResult), then lists them.", r.listRoots)
	add("test_input_required_result_request_state", "Asks for a confirmation with a signed requestState, and completes (state-ok) only when that state comes back intact.", r.signedConfirm)
	add("test_input_required_result_tampered_state", "As test_input_required_result_request_state: a requestState that fails its integrity check is refused.", r.signedConfirm)
	add("test_input_required_result_multiple_inputs", "Asks for a name (elicitation), a greeting (sampling) and the roots at once, then completes.", r.multipleInputs)
	add("test_input_required_result_multi_round", "Asks for a name, then a colour, each round with a new signed requestState, then completes.", r.multiRound)
	add("test_input_required_result_capabilities", "Asks only for the input the client declared it can give (elicitation, sampling, roots).", r.capabilities)
	add("test_missing_capability", "Needs the sampling capability: without it the call is refused with -32021.", r.missingCapability)
	add("test_streaming_elicitation", "Needs elicitation: asks for a confirmation as an InputRequiredResult on the call's own response, never as a request of the server's.", r.streamingElicitation)
	add("test_logging_tool", "Logs three messages, which reach the client only if its request set a log level.", logThree)
	srv.AddTool(&mcp.Tool{Name: "test_param_header", Description: "Echoes region, which the client mirrors in the Mcp-Param-Region header (x-mcp-header); the server refuses a call whose header does not match the body.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region","description":"echoed, and mirrored in Mcp-Param-Region"}},"required":["region"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Region string }
			if err := unmarshalArgs(req, &a); err != nil {
				return nil, err
			}
			return done("Region: %s", a.Region), nil
		})
	registerTaskFixtures(srv)

	srv.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for the prompt's context (elicitation, as an InputRequiredResult), then returns a prompt using it."}, r.prompt)
}

type irr struct{ StatelessOptions }

var (
	askName    = &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: stringField("name")}
	askCapital = &mcp.CreateMessageParams{MaxTokens: 100,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: text("What is the capital of France?")}}}
	askRoots    = &mcp.ListRootsParams{}
	askConfirm  = &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	askGreeting = &mcp.CreateMessageParams{MaxTokens: 50,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: text("Generate a greeting")}}}
	askColour  = &mcp.ElicitParams{Message: "Step 2: What is your favorite color?", RequestedSchema: stringField("color")}
	askStep1   = &mcp.ElicitParams{Message: "Step 1: What is your name?", RequestedSchema: stringField("name")}
	askContext = &mcp.ElicitParams{Message: "What context should the prompt use?", RequestedSchema: stringField("context")}
)

func stringField(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string"}},"required":[%q]}`, name, name))
}

// capability names the client capability an input request needs.
func capability(ir mcp.InputRequest) string {
	switch ir.(type) {
	case *mcp.ElicitParams:
		return "elicitation"
	case *mcp.ListRootsParams:
		return "roots"
	default:
		return "sampling"
	}
}

func declared(caps *mcp.ClientCapabilities, name string) bool {
	if caps == nil {
		return false
	}
	switch name {
	case "elicitation":
		return caps.Elicitation != nil
	case "roots":
		return caps.RootsV2 != nil
	default:
		return caps.Sampling != nil
	}
}

// missingCapability is MissingRequiredClientCapabilityError (-32021),
// naming the capabilities as a ClientCapabilities object.
func missingCapability(names ...string) error {
	req := map[string]any{}
	for _, n := range names {
		req[n] = map[string]any{}
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": req})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: "the client did not declare the capability this needs: " + strings.Join(names, ", "), Data: data}
}

// require fails with -32021 unless the request declared the capabilities
// of every input request in asks.
func require(caps *mcp.ClientCapabilities, asks mcp.InputRequestMap) error {
	var missing []string
	for _, ir := range asks {
		if n := capability(ir); !declared(caps, n) && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return missingCapability(missing...)
	}
	return nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// inputRequired asks for what of asks has no response yet in got.
func inputRequired(asks mcp.InputRequestMap, got mcp.InputResponseMap, state string) *mcp.CallToolResult {
	pending := mcp.InputRequestMap{}
	for k, ir := range asks {
		if got[k] == nil {
			pending[k] = ir
		}
	}
	return &mcp.CallToolResult{InputRequests: pending, RequestState: state}
}

// answered reports whether got holds a response to every key of asks.
func answered(asks mcp.InputRequestMap, got mcp.InputResponseMap) bool {
	for k := range asks {
		if got[k] == nil {
			return false
		}
	}
	return true
}

// userChose is an elicitation the user declined or cancelled.
type userChose string

func (u userChose) Error() string { return "the user chose " + string(u) }

// elicited is the string field of an accepted elicitation response; a
// declined or cancelled one is a userChose.
func elicited(resp mcp.InputResponse, field string) (string, error) {
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return "", invalidParams("inputResponses: got %T, want an elicitation result", resp)
	}
	if er.Action != "accept" {
		return "", userChose(er.Action)
	}
	v, ok := er.Content[field].(string)
	if !ok {
		b, _ := json.Marshal(er.Content[field])
		return string(b), nil
	}
	return v, nil
}

func done(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{text(fmt.Sprintf(format, args...))}}
}

// refused completes a call whose user declined; any other err fails it.
func refused(err error) (*mcp.CallToolResult, error) {
	var u userChose
	if errors.As(err, &u) {
		return done("Nothing done: %v", u), nil
	}
	return nil, err
}

// ask answers a one-round tool: the input it needs, or done applied to
// the responses.
func ask(req *mcp.CallToolRequest, asks mcp.InputRequestMap, finish func(mcp.InputResponseMap) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if err := require(req.ClientCapabilities(), asks); err != nil {
		return nil, err
	}
	got := req.Params.InputResponses
	if !answered(asks, got) {
		return inputRequired(asks, got, ""), nil
	}
	return finish(got)
}

func (r *irr) elicitation(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return ask(req, mcp.InputRequestMap{"user_name": askName}, func(got mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		name, err := elicited(got["user_name"], "name")
		if err != nil {
			return refused(err)
		}
		return done("Hello, %s!", name), nil
	})
}

func (r *irr) sampling(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return ask(req, mcp.InputRequestMap{"capital_question": askCapital}, func(got mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		s, ok := got["capital_question"].(*mcp.CreateMessageWithToolsResult)
		if !ok {
			return nil, invalidParams("inputResponses.capital_question: got %T, want a sampling result", got["capital_question"])
		}
		b, _ := json.Marshal(s.Content)
		return done("LLM response: %s", b), nil
	})
}

func (r *irr) listRoots(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return ask(req, mcp.InputRequestMap{"client_roots": askRoots}, func(got mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		lr, ok := got["client_roots"].(*mcp.ListRootsResult)
		if !ok {
			return nil, invalidParams("inputResponses.client_roots: got %T, want a roots list", got["client_roots"])
		}
		var uris []string
		for _, root := range lr.Roots {
			uris = append(uris, root.URI)
		}
		return done("Client roots: %s", strings.Join(uris, ", ")), nil
	})
}

// roundState is what a multi-round tool keeps in its signed requestState.
type roundState struct {
	Round int    `json:"round"`
	Name  string `json:"name,omitempty"`
}

// openState opens the call's requestState; a call that answers input
// must bring back the state it was given.
func (r *irr) openState(req *mcp.CallToolRequest, st *roundState) error {
	if req.Params.RequestState == "" {
		return invalidParams("inputResponses without the requestState of the InputRequiredResult they answer")
	}
	if err := r.Sealer.Open(r.Principal, req.Params.Name, req.Params.RequestState, st); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}

func (r *irr) seal(req *mcp.CallToolRequest, st roundState) (string, error) {
	return r.Sealer.Seal(r.Principal, req.Params.Name, st)
}

// firstRound answers a call's first round: an InputRequiredResult asking
// for asks, with the sealed requestState of round 1.
func (r *irr) firstRound(req *mcp.CallToolRequest, asks mcp.InputRequestMap) (*mcp.CallToolResult, error) {
	state, err := r.seal(req, roundState{Round: 1})
	if err != nil {
		return nil, err
	}
	return inputRequired(asks, nil, state), nil
}

// signedConfirm completes only with the confirmation and the intact
// requestState of its first round.
func (r *irr) signedConfirm(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	asks := mcp.InputRequestMap{"confirm": askConfirm}
	if err := require(req.ClientCapabilities(), asks); err != nil {
		return nil, err
	}
	if len(req.Params.InputResponses) == 0 {
		return r.firstRound(req, asks)
	}
	var st roundState
	if err := r.openState(req, &st); err != nil {
		return nil, err
	}
	if st.Round != 1 || !answered(asks, req.Params.InputResponses) {
		return inputRequired(asks, req.Params.InputResponses, req.Params.RequestState), nil
	}
	ok, err := elicited(req.Params.InputResponses["confirm"], "ok")
	if err != nil {
		return refused(err)
	}
	return done("state-ok: confirmed=%s", ok), nil
}

func (r *irr) multipleInputs(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	asks := mcp.InputRequestMap{"user_name": askName, "greeting": askGreeting, "client_roots": askRoots}
	if err := require(req.ClientCapabilities(), asks); err != nil {
		return nil, err
	}
	got := req.Params.InputResponses
	if len(got) == 0 {
		return r.firstRound(req, asks)
	}
	var st roundState
	if err := r.openState(req, &st); err != nil {
		return nil, err
	}
	if !answered(asks, got) {
		return inputRequired(asks, got, req.Params.RequestState), nil
	}
	name, err := elicited(got["user_name"], "name")
	if err != nil {
		return refused(err)
	}
	return done("Got all %d inputs: name %s, a greeting and the roots", len(asks), name), nil
}

// multiRound asks for a name, then a colour; the name rides in the
// second round's requestState.
func (r *irr) multiRound(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := require(req.ClientCapabilities(), mcp.InputRequestMap{"step1": askStep1}); err != nil {
		return nil, err
	}
	got := req.Params.InputResponses
	step1 := mcp.InputRequestMap{"step1": askStep1}
	if len(got) == 0 {
		return r.firstRound(req, step1)
	}
	var st roundState
	if err := r.openState(req, &st); err != nil {
		return nil, err
	}
	step2 := mcp.InputRequestMap{"step2": askColour}
	switch {
	case st.Round == 1 && answered(step1, got):
		name, err := elicited(got["step1"], "name")
		if err != nil {
			return refused(err)
		}
		state, err := r.seal(req, roundState{Round: 2, Name: name})
		if err != nil {
			return nil, err
		}
		return inputRequired(step2, nil, state), nil
	case st.Round == 2 && answered(step2, got):
		colour, err := elicited(got["step2"], "color")
		if err != nil {
			return refused(err)
		}
		return done("%s's favorite color is %s", st.Name, colour), nil
	case st.Round == 2:
		return inputRequired(step2, got, req.Params.RequestState), nil
	default:
		return inputRequired(step1, got, req.Params.RequestState), nil
	}
}

// capabilities asks for each input the client declared it can give.
func (r *irr) capabilities(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	caps := req.ClientCapabilities()
	asks := mcp.InputRequestMap{}
	for k, ir := range map[string]mcp.InputRequest{"user_name": askName, "capital_question": askCapital, "client_roots": askRoots} {
		if declared(caps, capability(ir)) {
			asks[k] = ir
		}
	}
	if len(asks) == 0 {
		return nil, missingCapability("elicitation", "roots", "sampling")
	}
	return ask(req, asks, func(mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return done("Got the input of %s", strings.Join(slices.Sorted(maps.Keys(asks)), ", ")), nil
	})
}

func (r *irr) missingCapability(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return ask(req, mcp.InputRequestMap{"capital_question": askCapital}, func(mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return done("sampling was declared and answered"), nil
	})
}

func (r *irr) streamingElicitation(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return ask(req, mcp.InputRequestMap{"confirm": askConfirm}, func(mcp.InputResponseMap) (*mcp.CallToolResult, error) {
		return done("confirmation received"), nil
	})
}

func logThree(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "test_logging_tool", Data: msg}); err != nil {
			return nil, err
		}
	}
	return done("Logging tool executed"), nil
}

func (r *irr) prompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	asks := mcp.InputRequestMap{"user_context": askContext}
	if err := require(req.ClientCapabilities(), asks); err != nil {
		return nil, err
	}
	got := req.Params.InputResponses
	if !answered(asks, got) {
		return &mcp.GetPromptResult{InputRequests: asks}, nil
	}
	c, err := elicited(got["user_context"], "context")
	var u userChose
	if errors.As(err, &u) {
		return messages(text("Answer without extra context (" + u.Error() + ").")), nil
	}
	if err != nil {
		return nil, err
	}
	return messages(text("Use this context: " + c)), nil
}
