package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notifier sends a tool call's notifications through the go-sdk session that
// received the call, so they travel on the call's own stream.
type notifier struct {
	s    *Server
	sess *session
}

func (n notifier) Progress(ctx context.Context, req *mcp.CallToolRequest, p *mcp.ProgressNotificationParams) {
	if err := req.Session.NotifyProgress(ctx, p); err != nil {
		n.s.log.Debug("progress notification not delivered", "session", n.sess.id, "err", err)
	}
}

func (n notifier) Log(ctx context.Context, req *mcp.CallToolRequest, p *mcp.LoggingMessageParams) {
	if err := req.Session.Log(ctx, p); err != nil {
		n.s.log.Debug("log notification not delivered", "session", n.sess.id, "err", err)
	}
}
