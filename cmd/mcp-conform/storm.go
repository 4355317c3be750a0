package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/storm"
	"github.com/mcp-conform/mcp-conform/target"
)

// The embedded reference's storm call: 20 steps 100 ms apart.
var stormReferenceArgs = map[string]any{"steps": 20, "interval_ms": 100}

func runStorm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("storm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o storm.Options
	targetURL := fs.String("url", "", "MCP endpoint to storm; empty storms the embedded reference server")
	targetConfig := fs.String("target-profile", "", "target profile file (YAML or JSON) declaring tools.notifying and the principals")
	renameFlag(fs, "target-config", "target-profile")
	serverCmd := fs.String("server-cmd", "", "command that starts the target, with {port} for a free port (also in --url); its RSS and CPU are reported")
	startTimeout := fs.Duration("server-start-timeout", 30*time.Second, "how long a --server-cmd target may take to answer")
	arguments := fs.String("arguments", "", "JSON object replacing the notifying tool's arguments, e.g. '{\"steps\":20,\"interval_ms\":100}'")
	notes := fs.Int("notifications", 0, "notifications the call sends with --arguments (default: the profile's)")
	interval := fs.Duration("interval", 0, "time between two notifications with --arguments (default: the profile's)")
	fs.IntVar(&o.Sessions, "sessions", storm.DefaultSessions, "sessions to open (N)")
	fs.IntVar(&o.Concurrency, "concurrency", storm.DefaultConcurrency, "sessions set up, and streams reopened, at once")
	fs.IntVar(&o.CutAfter, "cut-after", storm.DefaultCutAfter, "notifications every session receives before all connections are reset")
	fs.StringVar(&o.Cut, "cut", storm.CutClient, "who resets the connections: client (the client's own sockets, SO_LINGER 0) or proxy (an embedded fault proxy in front of --url resets both sides)")
	fs.StringVar(&o.Reconnect, "reconnect", storm.ReconnectBoth, "after the cut: resume (GET with the POST stream's Last-Event-ID), new-get (a new standalone GET with the old one's Last-Event-ID; what was in flight on the call's stream at the cut may be lost), or both")
	fs.DurationVar(&o.ReconnectDelay, "reconnect-delay", 0, "wait between the cut and the reconnects")
	fs.StringVar(&o.LogLevel, "log-level", "", "send logging/setLevel with this level after each initialize (debug ... emergency); empty sends none")
	fs.DurationVar(&o.Settle, "settle", storm.DefaultSettle, "bound on the wait, after the cut, for every notification and result")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", storm.DefaultRequestTimeout, "bound on each request's answer headers")
	fs.IntVar(&o.Attempts, "attempts", storm.DefaultAttempts, "times one stream is opened after the cut while something is missing")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", wire.DefaultProtocolVersion, "protocol version offered in initialize")
	var b storm.Bounds
	fs.DurationVar(&b.ResumeP99, "max-resume-p99", 0, "fail when cut->headers of the resume GETs has a p99 above this (0: no bound)")
	fs.DurationVar(&b.NewGETP99, "max-get-p99", 0, "fail when cut->headers of the new standalone GETs has a p99 above this (0: no bound)")
	fs.DurationVar(&b.SetupP99, "max-setup-p99", 0, "fail when session setup (initialize, initialized, GET) has a p99 above this (0: no bound)")
	jsonOut := fs.String("json", "", "write the measurements as JSON to this file")
	htmlOut := fs.String("html", "", "write the measurements as a self-contained HTML page to this file")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on the whole run")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: mcp-conform storm [flags]

Refresh storm: opens --sessions sessions, each with a standalone GET stream
and one call of the target profile's notifying tool; once every session has
--cut-after notifications, resets every connection at once (TCP RST from
the client side, or with --cut proxy from a fault proxy in between) and
reconnects each session as --reconnect says. Reports
setup throughput and latency, reconnect latency, and every notification
lost or duplicated. Without --url it storms the embedded reference server.

Exit status: 0 nothing lost, duplicated or missing and every bound met
(with --reconnect new-get, losses only among the notifications in flight
on the call's stream at the cut, which no new standalone GET can
acknowledge: at most K a session, stated in the output), 1 otherwise,
2 usage or setup error.

flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if err := explicitDir(fs, "json", *jsonOut); err != nil {
		return err
	}
	if err := explicitDir(fs, "html", *htmlOut); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usageError(fmt.Errorf("--timeout must be positive, got %v", *timeout))
	}
	cfg, err := stormProfile(*targetURL, *targetConfig)
	if err != nil {
		return usageError(err)
	}
	if err := stormTool(&o, cfg, *targetURL == "", *arguments, *notes, *interval); err != nil {
		return usageError(err)
	}
	o.Header = cfg.RequestHeader()
	if err := o.Validate(); err != nil {
		return usageError(err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, *timeout, fmt.Errorf("the run's --timeout of %v passed", *timeout))
	defer cancel()

	switch {
	case *serverCmd != "":
		if err := stormCmdFlags(*targetURL, *serverCmd); err != nil {
			return usageError(err)
		}
		p, err := harness.StartProcess(ctx, *serverCmd, *targetURL, *startTimeout)
		if err != nil {
			return usageError(err)
		}
		defer p.Close()
		o.URL = p.URL()
		o.Server = storm.ProcessGroup(p.Pgid())
	case *targetURL == "":
		h, err := stormReference(o.Sessions, stderr)
		if err != nil {
			return err
		}
		defer h.Close()
		o.URL = h.URL()
	default:
		if strings.Contains(*targetURL, "{port}") {
			return usageError(errors.New("--url contains {port} but no --server-cmd is given"))
		}
		o.URL = *targetURL
	}
	res, err := storm.Run(ctx, o)
	if err != nil {
		if c := context.Cause(ctx); c != nil {
			return c
		}
		return usageError(err) // it could not run: no session, no proxy
	}
	res.Judge(b)
	res.WriteConsole(stdout)
	if *targetURL == "" {
		fmt.Fprintln(stdout, "note: the embedded reference runs in this process: the client CPU includes the server's")
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{{"json", *jsonOut, res.WriteJSON}, {"html", *htmlOut, res.WriteHTML}} {
		if out.path == "" {
			continue
		}
		if err := report.WriteFile(out.path, out.write); err != nil {
			return fmt.Errorf("--%s: %w", out.flag, err)
		}
	}
	if !res.Passed() {
		return errors.New("storm failed: " + strings.Join(res.Failures, "; "))
	}
	return nil
}

// stormProfile is the target profile: the file given, or the embedded
// reference's.
func stormProfile(targetURL, path string) (*target.Profile, error) {
	if targetURL != "" {
		u, err := url.Parse(strings.ReplaceAll(targetURL, "{port}", "1"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--url must be an http:// or https:// URL, got %q", targetURL)
		}
	}
	switch {
	case path != "":
		return target.Load(path)
	case targetURL == "":
		return harness.ReferenceProfile(), nil
	}
	return nil, errors.New("--target-profile is needed with --url: storm calls the profile's tools.notifying")
}

// stormTool takes the notifying tool from the profile, with the overrides.
func stormTool(o *storm.Options, cfg *target.Profile, embedded bool, arguments string, notes int, interval time.Duration) error {
	t := cfg.Tools.Notifying
	if t == nil {
		return errors.New("the target profile declares no tools.notifying")
	}
	o.Tool, o.Arguments, o.Method = t.Name, t.Arguments, t.Method
	o.Notifications, o.Interval = t.Notifications, time.Duration(t.Interval)
	if embedded && arguments == "" {
		o.Arguments, o.Notifications, o.Interval = stormReferenceArgs, 20, 100*time.Millisecond
	}
	if arguments != "" {
		var args map[string]any
		if err := json.Unmarshal([]byte(arguments), &args); err != nil || args == nil {
			return fmt.Errorf("--arguments must be a JSON object, got %q", arguments)
		}
		if notes == 0 {
			return errors.New("--arguments needs --notifications: how many the call then sends")
		}
		o.Arguments = args
	}
	if notes < 0 || interval < 0 {
		return errors.New("--notifications and --interval must not be negative")
	}
	if notes > 0 {
		o.Notifications = notes
	}
	if interval > 0 {
		o.Interval = interval
	}
	return nil
}

func stormCmdFlags(targetURL, serverCmd string) error {
	if targetURL == "" {
		return errors.New("--server-cmd needs --url, e.g. --url http://127.0.0.1:{port}/mcp")
	}
	if strings.Contains(serverCmd, "{port}") != strings.Contains(targetURL, "{port}") {
		return errors.New("--server-cmd and --url must both use {port}, or neither")
	}
	return nil
}

// stormReference starts the embedded reference server with room for the
// storm's sessions under one principal.
func stormReference(sessions int, stderr io.Writer) (*server.Host, error) {
	cfg := server.ShortTimings()
	cfg.MaxSessionsPerPrincipal = max(sessions, server.DefaultMaxSessionsPerPrincipal)
	cfg.MaxSessions = max(sessions, server.DefaultMaxSessions)
	return harness.StartReference(cfg, stderr)
}
