// Package server is the reference MCP Streamable HTTP server: a session table
// around the official Go SDK that survives page refreshes, idle clients,
// dropped streams and restarts (the catalogue: mcp-conform list).
package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// ExpiredResponse selects what a request with an unknown or expired session id gets.
type ExpiredResponse string

const (
	// ExpiredEnvelope answers 404 with the -32003 "session expired" envelope.
	ExpiredEnvelope ExpiredResponse = "envelope"
	// ExpiredPlain answers 404 with a plain JSON-RPC error (-32001, "Session not found").
	ExpiredPlain ExpiredResponse = "plain"
)

// Production defaults from the behaviour catalogue.
const (
	DefaultReaperInterval       = time.Minute
	DefaultIdleThreshold        = 2 * time.Minute
	DefaultGracePeriod          = 10 * time.Minute
	DefaultEventMaxAge          = eventstore.DefaultMaxAge
	DefaultEventCleanupInterval = eventstore.DefaultCleanupInterval
	DefaultEventMaxBytes        = eventstore.DefaultMaxBytes
	DefaultSSEKeepAlive         = 15 * time.Second
	DefaultSSERetry             = time.Second
	DefaultRedirectDelay        = 250 * time.Millisecond
	DefaultMaxBodyBytes         = 4 << 20
	DefaultMaxSessions          = 10000
	// DefaultWriteTimeout bounds each write to a client; a stream whose
	// write takes longer is dead (its messages stay replayable).
	DefaultWriteTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a request's headers and body.
	DefaultReadTimeout       = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection with no request.
	DefaultIdleTimeout = time.Minute
	// resumeTokenSlack is added to idle threshold + grace period for the
	// default resume-token lifetime, so a token outlives the session it came from.
	resumeTokenSlack = 10 * time.Minute
	// resumeGETMargin is added to SSERetry for the default ResumeGETWait.
	resumeGETMargin = time.Second
)

// Config holds every knob of the reference server. Zero values take the
// production defaults (see Defaults); tests shorten the timings.
type Config struct {
	ReaperInterval  time.Duration
	IdleThreshold   time.Duration
	GracePeriod     time.Duration
	ExpiredResponse ExpiredResponse
	// RecoveryHint answers a stale session id with 404 plus the id of a new,
	// already initialized session (RESTART-HINT).
	RecoveryHint bool
	// BearerTokens maps token -> principal name. Empty means no authentication.
	BearerTokens map[string]string
	// AllowedOrigins lists exact Origin values that may call the server.
	// Empty means localhost, 127.0.0.1 and [::1] origins on any port.
	AllowedOrigins []string
	// ResumeTokenTTL is how long a job resume token stays valid.
	// Zero means IdleThreshold + GracePeriod + 10 minutes.
	ResumeTokenTTL time.Duration

	EventMaxAge          time.Duration
	EventCleanupInterval time.Duration
	EventMaxBytes        int64
	// SSEKeepAlive is the interval of comment lines on quiet standalone GET
	// streams; zero means the default, negative disables them.
	SSEKeepAlive time.Duration
	// SSERetry is the retry hint sent before the server closes a stream on purpose.
	SSERetry time.Duration

	MaxBodyBytes int64
	MaxSessions  int
	// MaxBatch bounds the messages of one JSON-RPC batch (2025-03-26);
	// MaxCallsPerSession the tool calls and tasks/result waits one session
	// has at once.
	MaxBatch           int
	MaxCallsPerSession int
	// MaxSessionlessPerClient bounds the 2026-07-28 requests one client
	// (a principal, else a client address as for AnonymousSessionRate) has
	// in flight, listen streams included.
	MaxSessionlessPerClient int
	// MaxSessionsPerPrincipal caps one bearer principal's sessions.
	MaxSessionsPerPrincipal int
	// AnonymousSessionRate (per second) and AnonymousSessionBurst limit new
	// sessions (initialize or recovery hint) of anonymous clients per
	// remote address.
	AnonymousSessionRate  float64
	AnonymousSessionBurst int
	// TrustedProxies are the peers whose forwarded client address, in
	// ForwardedHeader (HeaderXForwardedFor, the default, or
	// HeaderForwarded), counts for the anonymous rate instead of their own:
	// behind a reverse proxy every client has the proxy's address. No other
	// peer's header is read, nor the other header.
	TrustedProxies  []netip.Prefix
	ForwardedHeader string

	// Job bounds (job_start): running jobs in all and per client (a
	// principal, or an anonymous session), and completed jobs kept, in all
	// and per client. Zero means the jobs package's defaults.
	MaxJobs                  int
	MaxJobsPerClient         int
	MaxRetainedJobs          int
	MaxRetainedJobsPerClient int

	// Task bounds: tasks held in all (running and finished), running per
	// client (a principal, or an anonymous session), and finished ones kept
	// per client. Zero means the tasks package's defaults.
	MaxTasks                  int
	MaxTasksPerClient         int
	MaxRetainedTasksPerClient int

	// Tasks (params.task on long_operation and job_start): the ttl when the
	// client asks for none, the most it may ask for, and the poll interval
	// suggested to clients. Zero means the tasks package's defaults.
	TaskTTL          time.Duration
	TaskMaxTTL       time.Duration
	TaskPollInterval time.Duration

	// WriteTimeout bounds each write (and flush) to a client on any
	// response, streams included.
	WriteTimeout time.Duration
	// ReadTimeout, ReadHeaderTimeout and IdleTimeout are the http.Server's
	// (see HTTPServer). ReadTimeout covers the request's headers and body
	// only: a stream is not cut by it.
	ReadTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration

	// ParkCutNotes sends a call's notifications, while its cut POST stream
	// is not resumed and no GET stream is connected, to the standalone
	// stream (a later GET gets them) instead of holding them for whichever
	// stream comes first: a client that resumes only the POST stream misses
	// them. Only the broken fixture cut-notes-parked sets it.
	ParkCutNotes bool
	// DropGapNotes loses a call's notifications sent while its cut POST
	// stream is not resumed and no GET stream is connected: what a client
	// back from a refresh resumes never had them. Only the broken fixture
	// gap-notes-lost sets it.
	DropGapNotes bool

	// ResumeGETWait is how long a GET resuming a POST stream waits, after
	// its priming event, for a standalone GET with a Last-Event-ID to tell
	// which of the call's notifications sent to a standalone GET that has
	// since died reached the client; those it does not settle are then
	// replayed on the resumed stream (see delivery.go). Zero means SSERetry
	// + 1s (a client reconnects its GET after the retry hint); negative, no
	// wait.
	ResumeGETWait time.Duration
	// RedirectDelay is how long after the server finds a POST stream cut
	// its call's notifications are held before they go to a connected
	// standalone GET: a refresh resets the GET a moment after the POST,
	// and what is written to it in between may never be read. A resume
	// within it gets them on the POST stream. Zero means
	// DefaultRedirectDelay; negative, none.
	RedirectDelay time.Duration

	// Revisions are the protocol revisions the server speaks, any of
	// KnownRevisions: 2026-07-28 (sessionless) and the revisions with
	// sessions it negotiates at initialize. Empty means all. Naming one
	// era alone makes a server of that era only (revisions.go).
	Revisions []string
	// sessionless and legacy are derived from Revisions (withRevisions):
	// 2026-07-28 is spoken; the revisions with sessions, newest first.
	sessionless bool
	legacy      []string

	// ConformanceTools adds the fixtures the official MCP conformance suite
	// expects (package conformance).
	ConformanceTools bool

	// ToolsListChanged advertises tools.listChanged at 2026-07-28, for a
	// server that sends notifications/tools/list_changed on listen
	// streams (the client checks' scripted server does): a client opts in
	// only to what a server advertises.
	ToolsListChanged bool

	// Store holds the state replicas share; nil means in memory, this
	// process only. The server does not close it.
	Store store.Store

	Clock  clock.WithTickerAndDelayedExecution
	Logger *slog.Logger
}

// withDefaults returns c with zero fields replaced by production defaults.
func (c Config) withDefaults() Config {
	setDur := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	setDur(&c.ReaperInterval, DefaultReaperInterval)
	setDur(&c.IdleThreshold, DefaultIdleThreshold)
	setDur(&c.GracePeriod, DefaultGracePeriod)
	setDur(&c.EventMaxAge, DefaultEventMaxAge)
	setDur(&c.EventCleanupInterval, DefaultEventCleanupInterval)
	setDur(&c.SSEKeepAlive, DefaultSSEKeepAlive)
	setDur(&c.SSERetry, DefaultSSERetry)
	setDur(&c.ResumeTokenTTL, c.IdleThreshold+c.GracePeriod+resumeTokenSlack)
	setDur(&c.WriteTimeout, DefaultWriteTimeout)
	setDur(&c.ReadTimeout, DefaultReadTimeout)
	setDur(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setDur(&c.IdleTimeout, DefaultIdleTimeout)
	setDur(&c.ResumeGETWait, c.SSERetry+resumeGETMargin)
	setDur(&c.RedirectDelay, DefaultRedirectDelay)
	if c.ExpiredResponse == "" {
		c.ExpiredResponse = ExpiredEnvelope
	}
	if c.EventMaxBytes == 0 {
		c.EventMaxBytes = DefaultEventMaxBytes
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxCallsPerSession == 0 {
		c.MaxCallsPerSession = DefaultMaxCallsPerSession
	}
	if c.MaxSessionlessPerClient == 0 {
		c.MaxSessionlessPerClient = DefaultMaxSessionlessPerClient
	}
	if c.MaxSessionsPerPrincipal == 0 {
		c.MaxSessionsPerPrincipal = DefaultMaxSessionsPerPrincipal
	}
	if c.AnonymousSessionRate == 0 {
		c.AnonymousSessionRate = DefaultAnonymousSessionRate
	}
	if c.AnonymousSessionBurst == 0 {
		c.AnonymousSessionBurst = DefaultAnonymousSessionBurst
	}
	if c.ForwardedHeader == "" {
		c.ForwardedHeader = HeaderXForwardedFor
	}
	c.withRevisions()
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate reports the first nonsensical setting, worded for a CLI user.
func (c Config) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"reaper interval", c.ReaperInterval},
		{"idle threshold", c.IdleThreshold},
		{"grace period", c.GracePeriod},
		{"event max age", c.EventMaxAge},
		{"event cleanup interval", c.EventCleanupInterval},
		{"SSE retry", c.SSERetry},
		{"resume token TTL", c.ResumeTokenTTL},
		{"write timeout", c.WriteTimeout},
		{"read timeout", c.ReadTimeout},
		{"read header timeout", c.ReadHeaderTimeout},
		{"idle timeout", c.IdleTimeout},
	} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be positive, got %v", d.name, d.v)
		}
	}
	if !(c.AnonymousSessionRate > 0) { // NaN too
		return fmt.Errorf("anonymous session rate must be positive, got %v", c.AnonymousSessionRate)
	}
	switch c.ForwardedHeader {
	case HeaderXForwardedFor, HeaderForwarded:
	default:
		return fmt.Errorf("forwarded header must be %q or %q, got %q", HeaderXForwardedFor, HeaderForwarded, c.ForwardedHeader)
	}
	switch c.ExpiredResponse {
	case ExpiredEnvelope, ExpiredPlain:
	default:
		return fmt.Errorf("expired response must be %q or %q, got %q", ExpiredEnvelope, ExpiredPlain, c.ExpiredResponse)
	}
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"event max bytes", c.EventMaxBytes}, {"max body bytes", c.MaxBodyBytes},
		{"max sessions", int64(c.MaxSessions)}, {"max sessions per principal", int64(c.MaxSessionsPerPrincipal)},
		{"anonymous session burst", int64(c.AnonymousSessionBurst)}, {"max jobs", int64(c.MaxJobs)},
		{"max batch", int64(c.MaxBatch)}, {"max calls per session", int64(c.MaxCallsPerSession)},
		{"max sessionless requests per client", int64(c.MaxSessionlessPerClient)},
		{"max jobs per client", int64(c.MaxJobsPerClient)}, {"max retained jobs", int64(c.MaxRetainedJobs)},
		{"max retained jobs per client", int64(c.MaxRetainedJobsPerClient)},
		{"max tasks", int64(c.MaxTasks)}, {"max tasks per client", int64(c.MaxTasksPerClient)},
		{"max retained tasks per client", int64(c.MaxRetainedTasksPerClient)},
	} {
		if l.v < 0 {
			return fmt.Errorf("%s must not be negative, got %d", l.name, l.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"task TTL", c.TaskTTL}, {"task max TTL", c.TaskMaxTTL}, {"task poll interval", c.TaskPollInterval}} {
		if d.v < 0 {
			return fmt.Errorf("%s must not be negative, got %v", d.name, d.v)
		}
	}
	if err := c.validateRevisions(); err != nil {
		return err
	}
	for token, name := range c.BearerTokens {
		if token == "" || name == "" {
			return errors.New("bearer tokens need a non-empty principal name and token")
		}
	}
	return nil
}
