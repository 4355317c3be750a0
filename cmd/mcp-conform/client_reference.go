package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/fixtures/clients"
	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// runClientReference is the reference client as a client under test: it
// reads the contract's environment and runs `mcp-conform call` for it
// (call, list, resume, disconnect); show prints the state directory's
// contents. --broken wraps call in one of the broken variants.
func runClientReference(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client reference", flag.ContinueOnError)
	fs.SetOutput(stderr)
	broken := fs.String("broken", "", "run a deliberately broken variant of the reference client (docs/client-mode.md)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcp-conform client reference [--broken NAME] URL\n\nThe reference client under the client contract (MCP_CONFORM_* variables).\n\nvariants:")
		for _, f := range clients.All() {
			fmt.Fprintf(stderr, "  %-28s %s (breaks %v)\n", f.Name, f.About, f.Breaks)
		}
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(errors.New("want exactly one argument, the server URL"))
	}
	r, err := contract.FromEnv(fs.Arg(0))
	if err != nil {
		return usageError(err)
	}
	var fx clients.Fixture
	if *broken != "" {
		if fx, err = clients.Lookup(*broken); err != nil {
			return usageError(err)
		}
	}
	do := func() error {
		if r.Action == contract.ActionShow {
			return showStored(r, stdout)
		}
		if r.Action == contract.ActionListen && !speaksModern(r, fx.Flags) {
			fmt.Fprintf(stdout, "{\"type\":%q,\"reason\":%q}\n", contract.LineNotApplicable, "subscriptions/listen is of "+client.ModernProtocolVersion+", which this run was not told to speak")
			return fmt.Errorf("listen: not applicable without --protocol-version %s", client.ModernProtocolVersion)
		}
		return runCall(ctx, callArgs(r, fx.Flags), stdout, stderr)
	}
	if fx.Transport != nil {
		http.DefaultTransport = fx.Transport(http.DefaultTransport)
	}
	if fx.Output != nil {
		stdout = fx.Output(stdout)
	}
	if fx.IgnoreCancel {
		ctx = context.WithoutCancel(ctx)
	}
	if fx.Around != nil {
		return fx.Around(r, do)
	}
	return do()
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
	st, err := storage.Open(r.StateDir)
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
