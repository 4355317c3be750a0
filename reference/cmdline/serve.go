// Package cmdline runs the reference server from command-line flags: the
// mcp-conform reference-server command and the reference-server binary.
package cmdline

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/cli"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/redisstore"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// shutdownTimeout bounds draining the HTTP server after SIGINT/SIGTERM,
// once the sessions are closed (server.Host bounds that step).
const shutdownTimeout = 5 * time.Second

// Run parses args as prog's flags, serves until ctx ends, then shuts down.
// Bad flags are a cli.UsageError; -h is flag.ErrHelp.
func Run(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address; port 0 picks a free port")
	path := fs.String("path", "/mcp", "URL path of the MCP endpoint")
	var cfg server.Config
	fs.DurationVar(&cfg.ReaperInterval, "reaper-interval", server.DefaultReaperInterval, "how often idle sessions are looked for")
	fs.DurationVar(&cfg.IdleThreshold, "idle-threshold", server.DefaultIdleThreshold, "inactivity after which a session's grace period starts")
	fs.DurationVar(&cfg.GracePeriod, "grace-period", server.DefaultGracePeriod, "how long an idle session survives before it expires")
	expired := fs.String("expired-response", string(server.ExpiredEnvelope), "answer for an unknown or expired session id: envelope (404, -32003) or plain (404, -32001)")
	fs.BoolVar(&cfg.RecoveryHint, "recovery-hint", false, "answer a stale session id with 404 plus the id of a new, initialized session")
	tokens := &bearerTokens{}
	fs.Var(tokens, "bearer-token", "NAME=TOKEN: require 'Authorization: Bearer TOKEN' and bind sessions to principal NAME (repeatable)")
	var origins originList
	fs.Var(&origins, "allowed-origin", "an Origin allowed to call the server, e.g. https://app.example (repeatable; default: localhost origins on any port)")
	fs.DurationVar(&cfg.ResumeTokenTTL, "resume-token-ttl", 0, "lifetime of job resume tokens (default idle threshold + grace period + 10m)")
	fs.DurationVar(&cfg.EventMaxAge, "event-max-age", server.DefaultEventMaxAge, "events older than this are evicted from the replay store")
	fs.DurationVar(&cfg.EventCleanupInterval, "event-cleanup-interval", server.DefaultEventCleanupInterval, "how often old events are evicted")
	fs.Int64Var(&cfg.EventMaxBytes, "event-max-bytes", server.DefaultEventMaxBytes, "bound on the replay store's memory: event data plus a fixed overhead per event, stream and session; the oldest go first")
	fs.DurationVar(&cfg.SSEKeepAlive, "sse-keepalive", server.DefaultSSEKeepAlive, "interval of keep-alive comments on quiet SSE streams; 0 turns them off")
	fs.DurationVar(&cfg.SSERetry, "sse-retry", server.DefaultSSERetry, "retry value sent before the server closes a stream on purpose")
	fs.DurationVar(&cfg.RedirectDelay, "redirect-delay", server.DefaultRedirectDelay, "how long a call's notifications wait, after its POST stream is found cut, before they go to the standalone GET (a resume meanwhile gets them); 0 for none")
	fs.DurationVar(&cfg.ResumeGETWait, "resume-get-wait", 0, "how long a resume of a POST stream waits for a GET with Last-Event-ID to settle notifications sent to a GET that died before it replays them (default --sse-retry + 1s; 0 for no wait)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", server.DefaultMaxBodyBytes, "largest POST body accepted")
	fs.IntVar(&cfg.MaxSessions, "max-sessions", server.DefaultMaxSessions, "most sessions held at once; more get 503")
	fs.IntVar(&cfg.MaxSessionsPerPrincipal, "max-sessions-per-principal", server.DefaultMaxSessionsPerPrincipal, "most sessions one bearer principal holds at once; more get 429")
	fs.Float64Var(&cfg.AnonymousSessionRate, "anonymous-session-rate", server.DefaultAnonymousSessionRate, "new sessions per second an anonymous client address may start (initialize or recovery hint); more get 429")
	fs.IntVar(&cfg.AnonymousSessionBurst, "anonymous-session-burst", server.DefaultAnonymousSessionBurst, "new sessions an anonymous client address may start at once before --anonymous-session-rate applies")
	var trusted prefixList
	fs.Var(&trusted, "trusted-proxy", "CIDR or address of a reverse proxy whose forwarded client address (see --forwarded-header; the rightmost untrusted one) counts for the anonymous session rate instead of its own (repeatable; default none: no forwarded header is read)")
	fwdHeader := forwardedHeader(server.HeaderXForwardedFor)
	fs.Var(&fwdHeader, "forwarded-header", "the header the --trusted-proxy proxies name the client in: x-forwarded-for or forwarded (RFC 7239 for=); the other is never read")
	fs.IntVar(&cfg.MaxBatch, "max-batch", server.DefaultMaxBatch, "most messages in one JSON-RPC batch (protocol 2025-03-26)")
	fs.IntVar(&cfg.MaxCallsPerSession, "max-calls-per-session", server.DefaultMaxCallsPerSession, "most tool calls and tasks/result waits one session has at once")
	fs.IntVar(&cfg.MaxSessionlessPerClient, "max-sessionless-per-client", server.DefaultMaxSessionlessPerClient, "most protocol 2026-07-28 requests one client (a bearer principal, else a client address as for --anonymous-session-rate) has in flight, listen streams included; more get 429")
	fs.IntVar(&cfg.MaxJobs, "max-jobs", jobs.DefaultMaxRunning, "most jobs running at once")
	fs.IntVar(&cfg.MaxJobsPerClient, "max-jobs-per-client", jobs.DefaultMaxRunningPerOwner, "most jobs one client (a principal, or an anonymous session) runs at once")
	fs.IntVar(&cfg.MaxRetainedJobs, "max-retained-jobs", jobs.DefaultMaxRetained, "most finished jobs kept; the oldest go first, with their resume tokens")
	fs.IntVar(&cfg.MaxRetainedJobsPerClient, "max-retained-jobs-per-client", jobs.DefaultMaxRetainedPerOwner, "most finished jobs kept per client")
	fs.IntVar(&cfg.MaxTasks, "max-tasks", tasks.DefaultMaxTasks, "most tasks held, running and finished; past it the oldest finished task is dropped before its ttl")
	fs.IntVar(&cfg.MaxTasksPerClient, "max-tasks-per-client", tasks.DefaultMaxPerOwner, "most tasks one client (a principal, or an anonymous session) runs at once")
	fs.IntVar(&cfg.MaxRetainedTasksPerClient, "max-retained-tasks-per-client", tasks.DefaultMaxRetained, "most finished tasks kept per client; its oldest are dropped before their ttl")
	fs.DurationVar(&cfg.TaskTTL, "task-ttl", tasks.DefaultTTL, "how long a task and its result are kept from its creation when the client asks for no ttl")
	fs.DurationVar(&cfg.TaskMaxTTL, "task-max-ttl", tasks.DefaultMaxTTL, "the longest ttl a client may ask for; a longer one is cut to this (and reported so)")
	fs.DurationVar(&cfg.TaskPollInterval, "task-poll-interval", tasks.DefaultPollInterval, "pollInterval suggested to clients in every task")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "bound on each write to a client; a stream whose write takes longer is ended (its messages stay replayable)")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", server.DefaultReadTimeout, "bound on reading a request's headers and body (streams are not cut by it)")
	fs.DurationVar(&cfg.ReadHeaderTimeout, "read-header-timeout", server.DefaultReadHeaderTimeout, "bound on reading a request's headers")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	var revisions revisionList
	fs.Var(&revisions, "revisions", "protocol revisions to speak, comma-separated, of "+strings.Join(server.KnownRevisions(), ", ")+
		" (default all); 2026-07-28 has no sessions, the others have: one era alone makes a server of that era only, as before or after a rolling upgrade")
	fs.BoolVar(&cfg.ConformanceTools, "conformance-tools", false, "also serve the test_* tools, test:// resources and test_* prompts the official MCP conformance suite expects")
	storeURL := fs.String("store", "", "keep sessions, session state and events in Redis (redis://HOST:PORT/DB) so that replicas share them; default in memory")
	logLevel := fs.String("log-level", "info", "lifecycle log level on stderr: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [flags]\n\nRuns the reference MCP Streamable HTTP server. Prints 'listening on URL' when ready.\n\nflags:\n", prog)
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := cli.NoArgs(fs); err != nil {
		return err
	}
	// Config reads zero as the default and a negative value as none; on
	// the command line 0 means none.
	for name, d := range map[string]*time.Duration{"redirect-delay": &cfg.RedirectDelay, "resume-get-wait": &cfg.ResumeGETWait} {
		if *d < 0 {
			return cli.Usage(fmt.Errorf("--%s must not be negative, got %v", name, *d))
		}
		if *d == 0 && cli.FlagSet(fs, name) {
			*d = -1
		}
	}
	if !strings.HasPrefix(*path, "/") {
		return cli.Usage(fmt.Errorf("--path must start with /, got %q", *path))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cli.Usage(fmt.Errorf("--log-level: %v", err))
	}
	// Config treats zero as "use the default"; on the command line it is a mistake.
	for name, d := range map[string]time.Duration{
		"--reaper-interval": cfg.ReaperInterval, "--idle-threshold": cfg.IdleThreshold,
		"--grace-period": cfg.GracePeriod, "--event-max-age": cfg.EventMaxAge,
		"--event-cleanup-interval": cfg.EventCleanupInterval, "--sse-retry": cfg.SSERetry,
		"--write-timeout": cfg.WriteTimeout, "--read-timeout": cfg.ReadTimeout,
		"--read-header-timeout": cfg.ReadHeaderTimeout, "--idle-timeout": cfg.IdleTimeout,
		"--task-ttl": cfg.TaskTTL, "--task-max-ttl": cfg.TaskMaxTTL, "--task-poll-interval": cfg.TaskPollInterval,
	} {
		if d <= 0 {
			return cli.Usage(fmt.Errorf("%s must be positive, got %v", name, d))
		}
	}
	// Config treats zero as "use the default" and rejects negatives without
	// naming a flag; here every limit must be positive.
	for name, n := range map[string]int64{
		"--event-max-bytes": cfg.EventMaxBytes, "--max-body-bytes": cfg.MaxBodyBytes,
		"--max-sessions": int64(cfg.MaxSessions), "--max-sessions-per-principal": int64(cfg.MaxSessionsPerPrincipal),
		"--anonymous-session-burst": int64(cfg.AnonymousSessionBurst), "--max-batch": int64(cfg.MaxBatch),
		"--max-calls-per-session": int64(cfg.MaxCallsPerSession), "--max-jobs": int64(cfg.MaxJobs),
		"--max-sessionless-per-client": int64(cfg.MaxSessionlessPerClient),
		"--max-jobs-per-client":        int64(cfg.MaxJobsPerClient), "--max-retained-jobs": int64(cfg.MaxRetainedJobs),
		"--max-retained-jobs-per-client": int64(cfg.MaxRetainedJobsPerClient),
		"--max-tasks":                    int64(cfg.MaxTasks), "--max-tasks-per-client": int64(cfg.MaxTasksPerClient),
		"--max-retained-tasks-per-client": int64(cfg.MaxRetainedTasksPerClient),
	} {
		if n <= 0 {
			return cli.Usage(fmt.Errorf("%s must be positive, got %d", name, n))
		}
	}
	if !(cfg.AnonymousSessionRate > 0) {
		return cli.Usage(fmt.Errorf("--anonymous-session-rate must be positive, got %v", cfg.AnonymousSessionRate))
	}
	if cfg.SSEKeepAlive < 0 {
		return cli.Usage(fmt.Errorf("--sse-keepalive must not be negative, got %v", cfg.SSEKeepAlive))
	}
	if cfg.SSEKeepAlive == 0 {
		cfg.SSEKeepAlive = -1 // Config's zero means the default; the flag's means off
	}
	cfg.ExpiredResponse = server.ExpiredResponse(*expired)
	cfg.BearerTokens = tokens.byToken
	cfg.AllowedOrigins = origins
	cfg.TrustedProxies = trusted
	cfg.ForwardedHeader = string(fwdHeader)
	cfg.Revisions = revisions
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if *storeURL != "" {
		if !strings.HasPrefix(*storeURL, "redis://") {
			return cli.Usage(fmt.Errorf("--store must be redis://HOST:PORT/DB, got %q", *storeURL))
		}
		st, err := redisstore.New(ctx, redisstore.Options{
			URL: *storeURL, MaxAge: cfg.EventMaxAge, CleanupInterval: cfg.EventCleanupInterval, MaxBytes: cfg.EventMaxBytes,
		})
		if err != nil {
			return fmt.Errorf("--store: %w", err)
		}
		defer st.Close()
		cfg.Store = st
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h, err := server.NewHost(cfg, ln, server.HostOptions{Path: *path})
	if err != nil {
		ln.Close()
		return cli.Usage(err)
	}
	return UntilDone(ctx, h, stdout, cfg.Logger)
}

// UntilDone prints where h listens, serves until ctx ends, then shuts
// down cleanly (sessions first, then the HTTP server).
func UntilDone(ctx context.Context, h *server.Host, stdout io.Writer, log *slog.Logger) error {
	fmt.Fprintf(stdout, "listening on %s\n", h.URL())
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case <-h.Served():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return h.Shutdown(sctx)
}
