package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// irrResult is a tools/call result of the sessionless revision.
type irrResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	Content       []struct{ Text string }    `json:"content"`
}

// statelessCall sends a 2026-07-28 request whose client declares caps;
// Mcp-Name repeats params.name or params.taskId.
func (e *env) statelessCall(c *wire.Client, method string, params map[string]any, caps map[string]any) (int, wire.Message) {
	e.t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modern,
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodPost, "", c.Request(method, params))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", method)
	for _, key := range []string{"name", "taskId"} {
		if n, ok := params[key].(string); ok {
			req.Header.Set("Mcp-Name", n)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	m, err := resp.Result()
	if err != nil {
		e.t.Fatalf("%s: HTTP %d: %v", method, resp.Status, err)
	}
	return resp.Status, m
}

func (e *env) irr(c *wire.Client, params map[string]any, caps map[string]any) irrResult {
	e.t.Helper()
	status, m := e.statelessCall(c, "tools/call", params, caps)
	if status != http.StatusOK || m.Error != nil {
		e.t.Fatalf("%v: HTTP %d error %v", params, status, m.Error)
	}
	var r irrResult
	if err := json.Unmarshal(m.Result, &r); err != nil {
		e.t.Fatal(err)
	}
	return r
}

var allCaps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}

func accept(field, value string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{field: value}}
}

// TestModernConformanceTools: with ConformanceTools the sessionless path
// serves the suite's fixtures, declares prompts and completions in
// server/discover, and runs InputRequiredResult rounds whose requestState
// is signed and bound to the principal it was issued to.
func TestModernConformanceTools(t *testing.T) {
	e, alice, mallory := twoPrincipalsWith(t, server.Config{ConformanceTools: true})
	_, m := e.statelessCall(alice, "server/discover", map[string]any{}, allCaps)
	for _, want := range []string{`"prompts":{}`, `"completions":{}`} {
		if !strings.Contains(string(m.Result), want) {
			t.Errorf("server/discover %s lacks %s", m.Result, want)
		}
	}
	if r := e.irr(alice, map[string]any{"name": "test_simple_text", "arguments": map[string]any{}}, allCaps); len(r.Content) != 1 || r.ResultType != "complete" {
		t.Errorf("test_simple_text: %+v", r)
	}

	call := func(responses map[string]any, state string) map[string]any {
		p := map[string]any{"name": "test_input_required_result_multi_round", "arguments": map[string]any{}}
		if responses != nil {
			p["inputResponses"], p["requestState"] = responses, state
		}
		return p
	}
	r1 := e.irr(alice, call(nil, ""), allCaps)
	if r1.ResultType != "input_required" || r1.InputRequests["step1"] == nil || r1.RequestState == "" {
		t.Fatalf("round 1: %+v", r1)
	}
	r2 := e.irr(alice, call(map[string]any{"step1": accept("name", "Alice")}, r1.RequestState), allCaps)
	if r2.ResultType != "input_required" || r2.InputRequests["step2"] == nil || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %+v", r2)
	}
	r3 := e.irr(alice, call(map[string]any{"step2": accept("color", "blue")}, r2.RequestState), allCaps)
	if r3.ResultType != "complete" || len(r3.Content) != 1 || r3.Content[0].Text != "Alice's favorite color is blue" {
		t.Fatalf("round 3: %+v", r3)
	}
	step2 := map[string]any{"step2": accept("color", "blue")}
	for what, c := range map[string]struct {
		client *wire.Client
		state  string
	}{
		"a tampered state":       {alice, r2.RequestState + "-TAMPERED"},
		"alice's state, mallory": {mallory, r2.RequestState},
		"no state":               {alice, ""},
	} {
		s, m := e.statelessCall(c.client, "tools/call", call(step2, c.state), allCaps)
		modernCode(t, what, s, m, http.StatusBadRequest, -32602)
	}

	s, m := e.statelessCall(alice, "tools/call", map[string]any{"name": "test_missing_capability", "arguments": map[string]any{}}, map[string]any{})
	modernCode(t, "test_missing_capability undeclared", s, m, http.StatusBadRequest, -32021)
	if !strings.Contains(string(m.Error.Data), `"requiredCapabilities":{"sampling":{}}`) {
		t.Errorf("-32021 data %s: want requiredCapabilities naming sampling", m.Error.Data)
	}
	only := e.irr(alice, map[string]any{"name": "test_input_required_result_capabilities", "arguments": map[string]any{}}, map[string]any{"sampling": map[string]any{}})
	if len(only.InputRequests) != 1 || only.InputRequests["capital_question"] == nil {
		t.Errorf("a client declaring only sampling was asked for %v", only.InputRequests)
	}
}

// fixtureTask is tasks/get's answer for a conformance fixture's task.
type fixtureTask struct {
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *irrResult                 `json:"result"`
	Error         *struct{ Code int }        `json:"error"`
}

// TestModernTaskFixtures: the tasks extension's fixtures. A task waits
// input_required until tasks/update has answered every request (a partial
// answer leaves the rest pending), a tool error completes with isError,
// a protocol error fails, and a task-only tool refuses a client without
// the extension (-32021).
func TestModernTaskFixtures(t *testing.T) {
	e := newEnv(t, server.Config{ConformanceTools: true})
	tasksCaps := map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	get := func(id string) fixtureTask {
		status, m := e.taskCall("tasks/get", map[string]any{"taskId": id}, tasksCaps)
		var ft fixtureTask
		if status != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &ft) != nil {
			t.Fatalf("tasks/get %s: HTTP %d %v %s", id, status, m.Error, m.Result)
		}
		return ft
	}
	update := func(id string, responses map[string]any) {
		status, m := e.taskCall("tasks/update", map[string]any{"taskId": id, "inputResponses": responses}, tasksCaps)
		if status != http.StatusOK || m.Error != nil || string(m.Result) != `{"resultType":"complete"}` {
			t.Fatalf("tasks/update: HTTP %d %v %s", status, m.Error, m.Result)
		}
	}

	id := e.createFixtureTask("multi_input", tasksCaps)
	eventually(t, "multi_input to wait for input", func() bool { return get(id).Status == "input_required" })
	if got := get(id); len(got.InputRequests) != 2 {
		t.Fatalf("multi_input asks for %v, want two", got.InputRequests)
	}
	update(id, map[string]any{"first": accept("name", "a"), "not-asked": map[string]any{"ignored": true}})
	if got := get(id); got.Status != "input_required" || len(got.InputRequests) != 1 || got.InputRequests["second"] == nil {
		t.Fatalf("after a partial answer: %+v", got)
	}
	update(id, map[string]any{"second": accept("name", "b")})
	eventually(t, "multi_input to complete", func() bool { return get(id).Status == "completed" })

	id = e.createFixtureTask("failing_job", tasksCaps)
	eventually(t, "failing_job to end", func() bool { return get(id).Status != "working" })
	if got := get(id); got.Status != "completed" || got.Result == nil || len(got.Result.Content) == 0 {
		t.Fatalf("failing_job: %+v, want completed with its isError result", got)
	}
	id = e.createFixtureTask("protocol_error_job", tasksCaps)
	eventually(t, "protocol_error_job to end", func() bool { return get(id).Status != "working" })
	if got := get(id); got.Status != "failed" || got.Error == nil || got.Result != nil {
		t.Fatalf("protocol_error_job: %+v, want failed with an error", got)
	}
	s, m := e.statelessCall(e.c, "tools/call", map[string]any{"name": "failing_job", "arguments": map[string]any{}}, map[string]any{})
	modernCode(t, "failing_job without the extension", s, m, http.StatusBadRequest, -32021)
}

// createFixtureTask calls name as a task and returns the task's id.
func (e *env) createFixtureTask(name string, caps map[string]any) string {
	e.t.Helper()
	status, m := e.statelessCall(e.c, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, caps)
	var tk struct{ ResultType, TaskID string }
	if status != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &tk) != nil || tk.ResultType != "task" {
		e.t.Fatalf("%s: HTTP %d %v %s, want a task", name, status, m.Error, m.Result)
	}
	return tk.TaskID
}

// taskCall sends a tasks/* request of the env's client.
func (e *env) taskCall(method string, params map[string]any, caps map[string]any) (int, wire.Message) {
	e.t.Helper()
	return e.statelessCall(e.c, method, params, caps)
}

// TestModernParamHeader: test_param_header's region is mirrored in
// Mcp-Param-Region, and a call whose header is missing or disagrees with
// the body is refused (HeaderMismatch).
func TestModernParamHeader(t *testing.T) {
	e := newEnv(t, server.Config{ConformanceTools: true})
	for header, want := range map[string]int{"eu": 0, "=?base64?ZXU=?=": 0, "us": -32020, "": -32020} {
		params := map[string]any{"name": "test_param_header", "arguments": map[string]any{"region": "eu"},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}
		req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, "", e.c.Request("tools/call", params))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Protocol-Version", modern)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "test_param_header")
		if header != "" {
			req.Header.Set("Mcp-Param-Region", header)
		}
		resp, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		m, err := resp.Result()
		if err != nil {
			t.Fatal(err)
		}
		if want == 0 && (m.Error != nil || !strings.Contains(string(m.Result), "Region: eu")) {
			t.Errorf("Mcp-Param-Region %q: HTTP %d %v %s", header, resp.Status, m.Error, m.Result)
		}
		if want != 0 {
			modernCode(t, "Mcp-Param-Region "+header, resp.Status, m, http.StatusBadRequest, want)
		}
	}
}
