package clientchecks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// handsNothing is a client under test like the client libraries that hand
// their application a call's result only (effect's McpClient, reactive
// agents' makeMCPClient): it initializes a session at every run, reads a
// call's stream up to its response and skips every notification on it,
// prints the result without its structuredContent, stores nothing (show
// prints an empty stored line), fails at any answer but 200, and declines
// resume.
func handsNothing(url string) int {
	r, err := contract.FromEnv(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := json.NewEncoder(os.Stdout)
	fail := func(format string, args ...any) int {
		out.Encode(contract.Line{Type: contract.LineError, Error: fmt.Sprintf(format, args...)})
		return 1
	}
	switch r.Action {
	case contract.ActionShow:
		out.Encode(contract.Line{Type: contract.LineStored})
		return 0
	case contract.ActionCall, contract.ActionList:
	default:
		out.Encode(contract.Line{Type: contract.LineNotApplicable, Reason: "no API for " + string(r.Action)})
		return contract.ExitNotApplicable
	}
	sid := ""
	// send posts a message and returns the response to it (nil for a
	// notification), skipping every message without an id.
	send := func(id int, method string, params any) (json.RawMessage, error) {
		msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
		if id > 0 {
			msg["id"] = id
		}
		body, _ := json.Marshal(msg)
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", wire.MediaTypeJSON)
		req.Header.Set("Accept", wire.MediaTypeJSON+", "+wire.MediaTypeSSE)
		if sid != "" {
			req.Header.Set(wire.HeaderSessionID, sid)
			req.Header.Set(wire.HeaderProtocolVersion, string(wire.Revision20251125))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			return nil, fmt.Errorf("HTTP %d from the server", resp.StatusCode)
		}
		if s := resp.Header.Get(wire.HeaderSessionID); s != "" {
			sid = s
		}
		if id == 0 {
			return nil, nil
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data := sc.Text()
			if strings.HasPrefix(resp.Header.Get("Content-Type"), wire.MediaTypeSSE) {
				var ok bool
				if data, ok = strings.CutPrefix(data, "data:"); !ok {
					continue
				}
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(data), &m) != nil || len(m.ID) == 0 {
				continue // a notification: the application never sees it
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
			}
			return m.Result, nil
		}
		return nil, fmt.Errorf("%s: the stream ended without the response", method)
	}
	if _, err := send(1, "initialize", map[string]any{"protocolVersion": wire.Revision20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "hands-nothing", "version": "0"}}); err != nil {
		return fail("%v", err)
	}
	if _, err := send(0, "notifications/initialized", map[string]any{}); err != nil {
		return fail("%v", err)
	}
	if r.Action == contract.ActionList {
		if _, err := send(2, "tools/list", map[string]any{}); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	result, err := send(2, "tools/call", map[string]any{"name": r.Tool, "arguments": r.Arguments})
	if err != nil {
		return fail("%v", err)
	}
	var res map[string]json.RawMessage
	json.Unmarshal(result, &res)
	delete(res, "structuredContent")
	text, _ := json.Marshal(res)
	out.Encode(contract.Line{Type: contract.LineResult, Result: text})
	return 0
}

// TestHandsNothing: a client that hands its application no notification
// and no structuredContent is graded on what the scripted server sent and
// answered: the call in flight is killed all the same (CLI-RESUME goes on
// to the declined resume; CLI-PERSIST fails on the session it does not
// store, at once), and CLI-ENVELOPE reaches the expiry it is about, its
// job ids taken from the server's answers.
func TestHandsNothing(t *testing.T) {
	t.Parallel()
	command := helperCommand(t, "hands-nothing")
	for _, tc := range []struct {
		id    string
		state kit.State
		says  string
	}{
		{"CLI-RESUME", kit.Skipped, "the client declined resume"},
		{"CLI-PERSIST", kit.Failed, "stored session id: the session of the killed run"},
		{"CLI-ENVELOPE", kit.Failed, "on the 404 with the -32003 envelope the client must start a new session"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			// A client of its own: its state root is this subtest's.
			cl := &Client{Command: command, Measured: fastClient}
			r := runCheck(t, cl, tc.id, 0)
			if r.State != tc.state || !strings.Contains(r.Message, tc.says) {
				t.Errorf("state %v, message %q; want %v: %s", r.State, r.Message, tc.state, tc.says)
			}
			for _, wrong := range []string{"before printing", "in vain", "returned no job_id"} {
				if strings.Contains(r.Message, wrong) {
					t.Errorf("the message blames the wrong thing (%q): %s", wrong, r.Message)
				}
			}
			if tc.state == kit.Skipped && r.Cause != report.NotOffered {
				t.Errorf("cause %v, want %v", r.Cause, report.NotOffered)
			}
		})
	}
}

// TestE2EFixtureMessages: against the reference client's variants built by
// `mcp-conform`, a failure says what the variant does wrong, from what the
// server sent; a legitimate variant passes.
func TestE2EFixtureMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcp-conform and runs the reference client's variants")
	}
	t.Parallel()
	exe := filepath.Join(t.TempDir(), "mcp-conform")
	if out, err := exec.Command("go", "build", "-o", exe, "github.com/mcp-conform/mcp-conform/cmd/mcp-conform").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		fixture, id string
		state       kit.State
		says        []string
	}{
		{"hides-notifications", "CLI-RESUME", kit.Failed, []string{"the server sent run 1's #", "l2", "the client printed none before the kill and none after it"}},
		{"hides-notifications", "CLI-PERSIST", kit.Failed, []string{"no log message reached the application", "the log messages l1 l2 before its result", "the client printed no log line"}},
		{"hides-notifications", "CLI-RETRY-FIELD", kit.Failed, []string{"the server sent run 1's #", "the client printed none"}},
		{"drops-structured-content", "CLI-ENVELOPE", kit.Passed, nil},
	} {
		t.Run(tc.fixture+"/"+tc.id, func(t *testing.T) {
			t.Parallel()
			cl := &Client{Command: shellQuote(exe) + " client reference --broken " + tc.fixture, Measured: fastClient}
			r := runCheck(t, cl, tc.id, 0)
			if r.State != tc.state {
				t.Fatalf("state %v (%s), want %v", r.State, r.Message, tc.state)
			}
			for _, s := range tc.says {
				if !strings.Contains(r.Message, s) {
					t.Errorf("message %q does not say %q", r.Message, s)
				}
			}
			if strings.Contains(r.Message, "before printing") || strings.Contains(r.Message, "in vain") {
				t.Errorf("the message blames the wrong thing: %s", r.Message)
			}
		})
	}
}
