package browserclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	if !o.SharedTabs && !ownSession() {
		// Two tabs on one session take its GET stream from each other, and
		// an initialize of the second recreates the first's transport: the
		// tab that owns the stored session uses it, any other keeps one of
		// its own, for its life and its reloads.
		console.Call("info", "another tab of this page holds the stored session: this tab keeps a session of its own in sessionStorage")
		callcmd.WebArea = "sessionStorage"
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

// The tabs of the page: each has an id in its sessionStorage, which its
// reloads keep; localStorage names the tab whose session it stores.
const (
	keyTab   = "mcp_tab_id"
	keyOwner = "mcp_session_owner"
	// sessionLock is the Web Lock the owning tab holds for its life.
	sessionLock = "mcp-conform-reference-session"
)

// ownSession reports whether this tab owns the session stored in
// localStorage: the tab that stored it (reloaded or not), or any tab once
// no live tab holds the session lock. A tab that owns it holds the lock
// for its life, so that a second tab finds it taken. Nothing here waits
// on time: the document a reload replaced may hold the lock a while
// longer, and the reloaded tab is the owner all the same.
func ownSession() bool {
	ss, ls := js.Global().Get("sessionStorage"), js.Global().Get("localStorage")
	tab := ss.Call("getItem", keyTab)
	if tab.IsNull() {
		id := make([]byte, 16)
		rand.Read(id)
		ss.Call("setItem", keyTab, hex.EncodeToString(id))
		tab = ss.Call("getItem", keyTab)
	}
	locks := js.Global().Get("navigator").Get("locks")
	noLocks := locks.IsUndefined() || locks.IsNull()
	owner := ls.Call("getItem", keyOwner)
	switch {
	case owner.IsNull(), owner.String() == tab.String(), noLocks:
		// Ours, nobody's, or no way to tell another tab is there.
		if !noLocks {
			lock(locks, false)
		}
	case !lock(locks, true):
		return false // the owning tab is live
	}
	ls.Call("setItem", keyOwner, tab)
	return true
}

// lock asks for the session lock and holds it for the page's life once
// granted. With now it takes it only if it is free at once and reports
// whether it did; without, it queues for it and reports true.
func lock(locks js.Value, now bool) bool {
	got := make(chan bool, 1)
	hold := js.FuncOf(func(js.Value, []js.Value) any { return nil })
	cb := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) == 0 || args[0].IsNull() {
			got <- false
			return nil
		}
		got <- true
		// A promise that never settles: the lock goes with the page.
		return js.Global().Get("Promise").New(hold)
	})
	locks.Call("request", sessionLock, map[string]any{"ifAvailable": now}, cb)
	if !now {
		return true
	}
	return <-got
}
