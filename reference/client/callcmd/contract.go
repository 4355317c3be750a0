package callcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/reference/client"
)

// Contract runs one run of the client contract (docs/client-mode.md) with
// the reference client: show prints what is stored, listen declines a run
// not told to speak 2026-07-28, every other action is a Call, with extra
// flags (a broken variant's) before the tool.
func Contract(ctx context.Context, r contract.Run, extra []string, stdout, stderr io.Writer) error {
	if r.Action == contract.ActionShow {
		return showStored(r, stdout)
	}
	if r.Action == contract.ActionListen && !speaksModern(r, extra) {
		fmt.Fprintf(stdout, "{\"type\":%q,\"reason\":%q}\n", contract.LineNotApplicable, "subscriptions/listen is of "+client.ModernProtocolVersion+", which this run was not told to speak")
		return fmt.Errorf("listen: not applicable without --protocol-version %s", client.ModernProtocolVersion)
	}
	return Call(ctx, callArgs(r, extra), stdout, stderr)
}

// callArgs is the `mcp-conform call` command line of a run, with extra
// flags; the tool comes last.
func callArgs(r contract.Run, extra []string) []string {
	args := append([]string{"--state-dir", r.StateDir, "--url", r.URL, "-v"}, extra...)
	if r.BearerToken != "" {
		args = append(args, "--bearer-token", r.BearerToken)
	}
	if r.ProtocolVersion != "" {
		args = append(args, "--protocol-version", r.ProtocolVersion)
	}
	if r.OAuth {
		// The checks' authorization server approves at once: no browser.
		args = append(args, "--oauth", "--oauth-headless")
	}
	switch r.Action {
	case contract.ActionResume:
		args = append(args, "--resume")
	case contract.ActionDisconnect:
		args = append(args, "--disconnect")
	case contract.ActionTaskResume:
		args = append(args, "--resume", "--task")
	case contract.ActionTaskCall:
		args = append(args, "--task")
	case contract.ActionListen:
		args = append(args, "--listen")
	}
	if r.Action == contract.ActionCall || r.Action == contract.ActionTaskCall {
		args = append(args, "--", r.Tool)
		if len(r.Arguments) > 0 {
			args = append(args, string(r.Arguments))
		}
	}
	return args
}

// showStored prints what the reference client keeps in its state
// directory, without contacting the server.
func showStored(r contract.Run, stdout io.Writer) error {
	st, err := open(r.StateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	get := func(k string) string { v, _ := st.Get(k); return v }
	out := contract.Line{Type: contract.LineStored, ServerURL: get(client.KeyServerURL), SessionID: get(client.KeySessionID), LastEventID: get(client.KeyLastEventID)}
	// The newest call in flight is where a resume would start.
	var inflight map[string]client.InFlightCall
	json.Unmarshal([]byte(get(client.KeyInFlight)), &inflight)
	var newest client.InFlightCall
	for _, c := range inflight {
		if c.LastEventID != "" && c.Started.After(newest.Started) {
			newest = c
		}
	}
	if newest.LastEventID != "" {
		out.LastEventID = newest.LastEventID
	}
	var task client.TaskRecord
	if json.Unmarshal([]byte(get(client.KeyTask)), &task) == nil {
		out.TaskID = task.TaskID
	}
	var last client.LastResult
	if json.Unmarshal([]byte(get(client.KeyLastResult)), &last) == nil {
		out.LastResult = last.Result
	}
	var logs []client.LogEntry
	json.Unmarshal([]byte(get(client.KeyLogs)), &logs)
	for _, l := range logs {
		out.Logs = append(out.Logs, l.Params)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", data)
	return err
}

// speaksModern reports a run of the reference client that speaks
// 2026-07-28: told to, or by a variant's flags.
func speaksModern(r contract.Run, flags []string) bool {
	return r.ProtocolVersion == client.ModernProtocolVersion || slices.Contains(flags, client.ModernProtocolVersion)
}
