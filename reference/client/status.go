package client

import "encoding/json"

// Status is the connection state the client reports (CLI-STATUS).
type Status string

const (
	Connecting   Status = "connecting"
	Connected    Status = "connected"
	Reconnecting Status = "reconnecting"
	Disconnected Status = "disconnected"
)

// StatusEvent is one status transition.
type StatusEvent struct {
	Status    Status
	SessionID string
	// ProtocolVersion is the negotiated revision, once connected.
	ProtocolVersion string
	// Reconnected is set on Connected when the client rejoined its stored
	// session or replaced a lost one without the user doing anything.
	Reconnected bool
	// NewSession is set on Connected when the session is not the one the
	// client had before (a fresh start, a fallback or a replacement).
	NewSession bool
	// Reason says why the transition happened, for people.
	Reason string
	// Err is set on Disconnected after a failure.
	Err error
}

// Notification is a server message delivered to OnNotification, exactly
// once per event id.
type Notification struct {
	Method string
	Params json.RawMessage
	// EventID is the SSE event id it came with ("" if none).
	EventID string
	// Stream is "call" (a request's own stream, resumed or not) or
	// "standalone" (the session's GET stream).
	Stream string
	// RequestID is the request whose stream carried it, for "call".
	RequestID string
}

// emit reports a status transition.
func (c *Client) emit(ev StatusEvent) {
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	c.statusMu.Lock()
	c.status = ev.Status
	c.statusMu.Unlock()
	c.log.Debug("status", "status", ev.Status, "session", ev.SessionID, "reason", ev.Reason)
	if c.opts.OnStatus != nil {
		c.opts.OnStatus(ev)
	}
}

// Status returns the current status.
func (c *Client) Status() Status {
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	return c.status
}
