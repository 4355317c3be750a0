package client

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/utils/clock"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// ReconnectMode chooses how a restarted client rejoins its stored session.
type ReconnectMode string

const (
	// Auto rejoins with Reuse while the stored state has a call in flight,
	// and with Reinitialize otherwise: a re-initialize replaces the
	// transport the call is running on, and a server may then be unable to
	// deliver its response (the reference server's old transport refuses
	// writes once it is closed).
	Auto ReconnectMode = "auto"
	// Reinitialize sends initialize carrying the stored session id, for
	// servers that recreate the session's transport (the reference server).
	// If the server refuses a second initialize it falls back to Reuse.
	Reinitialize ReconnectMode = "reinit"
	// Reuse sends no initialize: it opens the GET stream with the stored id
	// and negotiated protocol version, then carries on. If the server wants
	// an initialize first it falls back to Reinitialize.
	Reuse ReconnectMode = "reuse"
)

// Defaults for zero Options fields.
const (
	DefaultProtocolVersion   = "2025-11-25"
	DefaultReconnectDelay    = time.Second
	DefaultMaxReconnectDelay = 10 * time.Second
	DefaultSettle            = 100 * time.Millisecond
	DefaultMaxLogs           = 100
)

// DefaultResumeTokenFields are the structured-result fields remembered as
// conversation state, to continue an operation in a new session.
var DefaultResumeTokenFields = []string{"resume_token"}

// Options configures a Client. Only URL is required (or a URL in Storage).
type Options struct {
	// URL is the MCP endpoint. Empty means the URL in Storage.
	URL string
	// Storage is the client's memory across restarts; nil means in-memory.
	Storage storage.Storage
	// BearerToken is sent as Authorization: Bearer and stored. Empty means
	// the stored token, if any: reconnecting never runs an auth flow.
	BearerToken string
	// OAuth runs the authorization flow on a 401 (or a 403 for more
	// scopes). Without it, a stored OAuth grant is still used and
	// refreshed, but a 401 it cannot answer fails the request.
	OAuth *OAuthOptions
	// HTTPClient sends every request; nil means a new http.Client. Without
	// a CheckRedirect of its own it follows redirects only within the
	// origin of the request (wire.RedirectPolicy): net/http would carry the
	// Authorization header to another port of the host, and a token
	// request's body to any host.
	HTTPClient *http.Client
	// ProtocolVersion is offered in initialize.
	ProtocolVersion string
	// Reconnect is how a stored session is rejoined (default Auto).
	Reconnect ReconnectMode

	// ReconnectDelay is the wait before reopening a stream that ended or
	// failed when the server gave no retry field; it doubles on consecutive
	// failures up to MaxReconnectDelay.
	ReconnectDelay    time.Duration
	MaxReconnectDelay time.Duration
	// ReconnectWait is the pause before a new session is made after the old
	// one was found gone (404 or a session-expired error). Zero: none.
	ReconnectWait time.Duration
	// Settle is how long a call whose stream was resumed waits after its
	// result for notifications still on their way over the GET stream, so
	// the result comes last. Negative: no wait.
	Settle time.Duration
	// MaxLogs bounds the notifications/message entries kept in Storage.
	MaxLogs int
	// ResumeTokenFields are remembered from tool results as conversation
	// state; fields named by a server's resume hint are added as they come.
	ResumeTokenFields []string

	// OnStatus and OnNotification are called one at a time, in order, never
	// concurrently with each other.
	OnStatus       func(StatusEvent)
	OnNotification func(Notification)
	// OnTask gets a task's status when it is created and when polling
	// sees it change (CallToolTask, ResumeTask).
	OnTask func(TaskEvent)

	// The server's requests to the client (on a call's stream, or as the
	// input requests of a 2026-07-28 InputRequiredResult) are answered by
	// these; each one set declares its capability, and a request without
	// one is refused (-32601, or the call fails under 2026-07-28).
	//
	// OnElicit answers elicitation/create. An "accept" whose content leaves
	// out a property with a schema default gets that default (SEP-1034).
	OnElicit func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// OnSample answers sampling/createMessage.
	OnSample func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// Roots answer roots/list (an empty, non-nil list declares the
	// capability with no root).
	Roots []*mcp.Root

	// Clock times every wait; tests inject a fake one.
	Clock  clock.WithTicker
	Logger *slog.Logger
	// ClientName is sent in clientInfo.
	ClientName string
}

func (o Options) withDefaults() Options {
	if o.Storage == nil {
		o.Storage = storage.NewMemory()
	}
	switch {
	case o.HTTPClient == nil:
		o.HTTPClient = &http.Client{CheckRedirect: wire.RedirectPolicy(true)}
	case o.HTTPClient.CheckRedirect == nil:
		hc := *o.HTTPClient
		hc.CheckRedirect = wire.RedirectPolicy(true)
		o.HTTPClient = &hc
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = DefaultProtocolVersion
	}
	if o.Reconnect == "" {
		o.Reconnect = Auto
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = DefaultReconnectDelay
	}
	if o.MaxReconnectDelay < o.ReconnectDelay {
		o.MaxReconnectDelay = max(DefaultMaxReconnectDelay, o.ReconnectDelay)
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	if o.MaxLogs <= 0 {
		o.MaxLogs = DefaultMaxLogs
	}
	if o.ResumeTokenFields == nil {
		o.ResumeTokenFields = DefaultResumeTokenFields
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientName == "" {
		o.ClientName = "mcp-conform-reference-client"
	}
	return o
}
