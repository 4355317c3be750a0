package callcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/client"
)

const callUsage = `usage: mcp-conform call --state-dir DIR [--url URL] [flags] [TOOL [JSON_ARGS]]
       mcp-conform call --state-dir DIR --resume
       mcp-conform call --state-dir DIR --disconnect
       mcp-conform call --state-dir DIR --protocol-version 2026-07-28 --listen [--subscribe URI]...

Connects to the MCP server, or rejoins the session stored in DIR, calls TOOL
with a progress token (without TOOL: lists the tools) and prints one JSON
object per line: status changes, notifications as they arrive, then the
result. --resume starts no call: it reattaches to the call that was in flight
when the previous process died and prints the rest of it. --disconnect ends
the stored session (DELETE) and clears it. --task runs TOOL as a task
(params.task): the task id is stored in DIR at once and the task polled at
its pollInterval to its result, printing a task line per status; --resume
then polls the stored task (in a new session if need be) instead.
The server's requests (elicitation, sampling, roots) are refused unless
--elicit, --sample or --root say how to answer them. A 401 fails the call
unless --oauth runs the authorization flow; its tokens are kept in DIR and
refreshed.
With --protocol-version 2026-07-28 there is no session: the client asks
server/discover (and initializes instead if the server speaks only an older
revision), declares the io.modelcontextprotocol/tasks extension on every
request, re-issues a request whose response stream broke, and reads a
task's result inline from tasks/get; --resume re-issues the call in flight
as a new request. --listen (2026-07-28) calls no tool: it opens a
subscriptions/listen stream for the tools, prompts and resources list
changes (and the resources named by --subscribe), prints its notifications,
and listens again after a stream that ends without the subscription's
completion response; it exits 0 when the server ends the subscription
gracefully.

Exit status: 0 success, 1 failure (including a tool result with isError),
2 usage error.

flags:`

// callFlags are call's command line.
type callFlags struct {
	url, stateDir, token, reconnect, version string
	resume, disconnect, verbose, task        bool
	listen                                   bool
	subscribe                                stringList
	reconnectDelay, maxReconnectDelay        time.Duration
	reconnectWait, settle, timeout           time.Duration
	tool                                     string
	args                                     json.RawMessage
	answers                                  answerFlags
	oauth                                    oauthFlags
}

func parseCallFlags(args []string, stderr io.Writer) (*callFlags, error) {
	f := &callFlags{}
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.url, "url", "", "MCP endpoint URL (default: the one stored in --state-dir)")
	fs.StringVar(&f.stateDir, "state-dir", "", "directory of the client's persistent state (required)")
	fs.StringVar(&f.token, "bearer-token", "", "bearer token to send and store (default: the stored one)")
	fs.BoolVar(&f.resume, "resume", false, "reattach to the call in flight when the previous process died")
	fs.BoolVar(&f.disconnect, "disconnect", false, "end the stored session (DELETE) and clear it")
	fs.BoolVar(&f.listen, "listen", false, "2026-07-28: keep a subscriptions/listen stream open and print its notifications, listening again after a cut")
	fs.Var(&f.subscribe, "subscribe", "with --listen: a resource URI to get notifications/resources/updated for (repeatable)")
	fs.BoolVar(&f.task, "task", false, "run TOOL as a task: store its id, poll it to its result (--resume polls a stored task)")
	fs.StringVar(&f.reconnect, "reconnect", string(client.Auto), "how to rejoin a stored session: reinit (initialize with the stored id), reuse (no initialize), or auto (reuse while a call is in flight, else reinit)")
	fs.StringVar(&f.version, "protocol-version", client.DefaultProtocolVersion, "protocol revision: offered in initialize, or 2026-07-28 (no session: server/discover, per-request _meta, tasks through the io.modelcontextprotocol/tasks extension)")
	fs.DurationVar(&f.reconnectDelay, "reconnect-delay", client.DefaultReconnectDelay, "wait before reopening a cut stream when the server sent no retry field")
	fs.DurationVar(&f.maxReconnectDelay, "max-reconnect-delay", client.DefaultMaxReconnectDelay, "cap of the reconnect delay while attempts keep failing")
	fs.DurationVar(&f.reconnectWait, "reconnect-wait", 0, "pause before a new session replaces one the server dropped")
	fs.DurationVar(&f.settle, "settle", client.DefaultSettle, "after a resumed call's result, wait this long for its last notifications (negative: none)")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.BoolVar(&f.verbose, "v", false, "log the client's reconnects and resumptions to stderr")
	f.answers.register(fs)
	f.oauth.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, callUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	switch {
	case f.stateDir == "":
		return nil, usageError(errors.New("--state-dir is required"))
	case f.resume && f.disconnect:
		return nil, usageError(errors.New("--resume and --disconnect exclude each other"))
	case f.listen && (f.resume || f.disconnect || f.task || len(rest) > 0):
		return nil, usageError(errors.New("--listen takes no TOOL and excludes --resume, --disconnect and --task"))
	case len(f.subscribe) > 0 && !f.listen:
		return nil, usageError(errors.New("--subscribe needs --listen"))
	case f.task && (f.disconnect || (!f.resume && len(rest) == 0)):
		return nil, usageError(errors.New("--task needs a TOOL (or --resume)"))
	case (f.resume || f.disconnect) && len(rest) > 0:
		return nil, usageError(fmt.Errorf("--resume and --disconnect take no TOOL, got %s", strings.Join(rest, " ")))
	case len(rest) > 2:
		return nil, usageError(fmt.Errorf("unexpected arguments: %s", strings.Join(rest[2:], " ")))
	case f.reconnect != string(client.Auto) && f.reconnect != string(client.Reinitialize) && f.reconnect != string(client.Reuse):
		return nil, usageError(fmt.Errorf("--reconnect must be auto, reinit or reuse, got %q", f.reconnect))
	case f.reconnectDelay <= 0 || f.maxReconnectDelay <= 0:
		return nil, usageError(errors.New("--reconnect-delay and --max-reconnect-delay must be positive"))
	case f.reconnectWait < 0 || f.timeout < 0:
		return nil, usageError(errors.New("--reconnect-wait and --timeout must not be negative"))
	}
	if err := client.CheckProtocolVersion(f.version); err != nil {
		return nil, usageError(fmt.Errorf("--protocol-version: %w", err))
	}
	if err := f.answers.check(); err != nil {
		return nil, usageError(err)
	}
	if err := f.oauth.check(); err != nil {
		return nil, usageError(err)
	}
	if len(rest) > 0 {
		f.tool = rest[0]
		f.args = json.RawMessage(`{}`)
	}
	if len(rest) == 2 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(rest[1]), &obj); err != nil || obj == nil {
			return nil, usageError(fmt.Errorf("JSON_ARGS must be a JSON object, got %q", rest[1]))
		}
		f.args = json.RawMessage(rest[1])
	}
	if f.listen && f.version != client.ModernProtocolVersion {
		return nil, usageError(fmt.Errorf("--listen needs --protocol-version %s: subscriptions/listen is of that revision", client.ModernProtocolVersion))
	}
	if f.version == client.ModernProtocolVersion && f.disconnect {
		return nil, usageError(fmt.Errorf("--protocol-version %s has no sessions: there is no session to --disconnect", client.ModernProtocolVersion))
	}
	if f.settle == 0 {
		f.settle = -1 // Options' zero means the default; the flag's means none
	}
	return f, nil
}

// Call is `mcp-conform call`: args are its command line (without the
// command's name), and it prints its JSON lines to stdout.
func Call(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseCallFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	st, err := open(f.stateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	out := &lines{w: stdout}
	logger := slog.New(slog.DiscardHandler)
	if f.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := client.Options{
		URL:               f.url,
		Storage:           st,
		HTTPClient:        callHTTPClient(),
		BearerToken:       f.token,
		ProtocolVersion:   f.version,
		Reconnect:         client.ReconnectMode(f.reconnect),
		ReconnectDelay:    f.reconnectDelay,
		MaxReconnectDelay: f.maxReconnectDelay,
		ReconnectWait:     f.reconnectWait,
		Settle:            f.settle,
		OnStatus:          out.status,
		OnNotification:    out.notification,
		OnTask:            out.task,
		Logger:            logger,
	}
	f.answers.apply(&opts)
	f.oauth.apply(&opts, stderr)
	c, err := client.New(opts)
	if err != nil {
		return err
	}
	if owner := c.WithheldToken(); owner != "" {
		fmt.Fprintf(stderr, "mcp-conform call: the stored bearer token belongs to %s and was not sent to %s; pass --bearer-token to send one there\n", owner, urlOrigin(c.URL()))
	}
	err = callOnce(ctx, c, f, out)
	if err != nil {
		out.print(contract.Line{Type: contract.LineError, Error: err.Error(), Cancelled: client.IsCancelled(err)})
	}
	out.finish() // the process ending is not a disconnect: no status line for it
	c.Close()
	return err
}

// callHTTPClient sends every request of call, its OAuth flow's included.
// It follows a redirect only within the origin (scheme, host and port), as
// the harness does: net/http alone would carry the Authorization header
// to another port, and a token request's body to another host.
func callHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: wire.RedirectPolicy(true)}
}

// urlOrigin returns scheme://host[:port] of u.
func urlOrigin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

func callOnce(ctx context.Context, c *client.Client, f *callFlags, out *lines) error {
	if f.disconnect {
		return c.Disconnect(ctx, client.DisconnectOptions{ClearSession: true})
	}
	if err := c.Connect(ctx); err != nil {
		return err
	}
	var res *client.ToolResult
	var err error
	if f.listen {
		return c.Listen(ctx, client.ListenFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: f.subscribe})
	}
	_, stored := c.StoredTask()
	switch {
	case f.resume && (f.task || stored):
		res, err = c.ResumeTask(ctx)
	case f.resume:
		res, err = c.ResumeCall(ctx)
	case f.task:
		res, err = c.CallToolTask(ctx, f.tool, f.args)
	case f.tool == "":
		tools, err := c.ListTools(ctx)
		if err != nil {
			return err
		}
		l := contract.Line{Type: contract.LineTools, Tools: make([]contract.ToolEntry, len(tools))}
		for i, t := range tools {
			schema, _ := json.Marshal(t.InputSchema)
			l.Tools[i] = contract.ToolEntry{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		}
		out.print(l)
		return nil
	default:
		res, err = c.CallTool(ctx, f.tool, f.args)
	}
	if err != nil {
		return err
	}
	out.print(contract.Line{Type: contract.LineResult, Tool: res.Tool, RequestID: res.RequestID, Result: res.Raw})
	if res.Result.IsError {
		return fmt.Errorf("tool %s returned an error result", res.Tool)
	}
	return nil
}

// lines prints one JSON object per line; the client's callbacks and the
// final result come from different goroutines.
type lines struct {
	mu   sync.Mutex
	w    io.Writer
	done bool
}

func (l *lines) status(ev client.StatusEvent) {
	sl := contract.Line{Type: contract.LineStatus, Status: string(ev.Status), SessionID: ev.SessionID, ProtocolVersion: ev.ProtocolVersion,
		Reconnected: ev.Reconnected, NewSession: ev.NewSession, Reason: ev.Reason}
	if ev.Err != nil {
		sl.Error = ev.Err.Error()
	}
	l.print(sl)
}

func (l *lines) task(ev client.TaskEvent) {
	l.print(contract.Line{Type: contract.LineTask, TaskID: ev.TaskID, Status: ev.Status, Reason: ev.StatusMessage})
}

func (l *lines) notification(n client.Notification) {
	l.print(contract.Line{Type: contract.LineNotification, Stream: n.Stream, EventID: n.EventID, RequestID: n.RequestID, Method: n.Method, Params: n.Params})
}

func (l *lines) print(v contract.Line) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(contract.Line{Type: contract.LineError, Error: "encoding output: " + err.Error()})
	}
	l.w.Write(append(data, '\n'))
}

// finish drops every later line.
func (l *lines) finish() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}
