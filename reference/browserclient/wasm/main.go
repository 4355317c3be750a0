//go:build js && wasm

// Command wasm is the reference browser client: the reference client
// compiled to WebAssembly, run by a page under the page contract
// (docs/client-mode.md, package contract): its state in localStorage, its
// requests through the browser's fetch, its lines through mcpConform.line.
// Package browserclient builds it and serves it with its page.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall/js"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/client/callcmd"
)

func main() {
	mc := js.Global().Get(contract.PageGlobal)
	console := js.Global().Get("console")
	if mc.IsUndefined() {
		console.Call("error", "the reference browser client runs under mcp-conform client --browser, which defines "+contract.PageGlobal)
		return
	}
	exit := func(code int) { mc.Call("exit", code) }
	var pr contract.PageRun
	raw := js.Global().Get("JSON").Call("stringify", mc.Get("run")).String()
	if err := json.Unmarshal([]byte(raw), &pr); err != nil {
		console.Call("error", "reading "+contract.PageGlobal+".run: "+err.Error())
		exit(cli.ExitUsage)
		return
	}
	r, err := pr.Contract("localStorage")
	if err != nil {
		console.Call("error", err.Error())
		exit(cli.ExitUsage)
		return
	}
	stdout := writer(func(s string) { mc.Call("line", s) })
	stderr := writer(func(s string) { console.Call("error", s) })
	if r.OAuth {
		// The authorization flow of a page is a top-level redirect to the
		// authorization server and back, which this page does not do.
		fmt.Fprintf(stdout, "{\"type\":%q,\"reason\":%q}\n", contract.LineNotApplicable, "the reference browser client does no OAuth")
		exit(contract.ExitNotApplicable)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	mc.Set("oncancel", js.FuncOf(func(js.Value, []js.Value) any { cancel(); return nil }))
	err = callcmd.Contract(ctx, r, nil, stdout, stderr)
	exit(cli.ExitCode(err, "reference browser client", stderr))
}

// writer hands each line written to it to line (a contract line, or one
// for the console); the command writes whole lines.
type writer func(string)

func (w writer) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w(l)
	}
	return len(p), nil
}
