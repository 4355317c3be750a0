package browserclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall/js"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/client/callcmd"
)

// Main does the run that the page contract's mcpConform.run describes
// with the reference client, its state in localStorage and its requests
// through fetch, and reports through mcpConform.line and exit.
func Main(o Options) {
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
	if o.Transport != nil {
		http.DefaultTransport = o.Transport(http.DefaultTransport)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mc.Set("oncancel", js.FuncOf(func(js.Value, []js.Value) any { cancel(); return nil }))
	call := func() error { return callcmd.Contract(ctx, r, nil, stdout, stderr) }
	if o.Around != nil {
		err = o.Around(r, call)
	} else {
		err = call()
	}
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
