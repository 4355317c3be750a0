package server

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerPOSTToken is set by the server on each POST it hands to the go-sdk
// (any client value is dropped), so a tool call can tell whether the HTTP
// request that carried it is still connected.
const headerPOSTToken = "Mcp-Conform-Post-Token"

// notifier sends a tool call's notifications on the call's own POST stream
// while that request is connected. Once it is gone (a refresh, a cut), the
// go-sdk would store them on the dead stream where nobody looks; they go to
// the standalone GET stream of the session's current transport instead
// (REDIRECT-ORPHANED), now or as soon as a GET is back. The response itself
// stays on the POST stream, for resumption (REDIRECT-NO-RESPONSE).
type notifier struct {
	s    *Server
	sess *session
}

func (n notifier) Progress(ctx context.Context, req *mcp.CallToolRequest, p *mcp.ProgressNotificationParams) {
	ss, ctx := n.route(ctx, req)
	if err := ss.NotifyProgress(ctx, p); err != nil {
		n.s.log.Debug("progress notification not delivered", "session", n.sess.id, "err", err)
	}
}

func (n notifier) Log(ctx context.Context, req *mcp.CallToolRequest, p *mcp.LoggingMessageParams) {
	ss, ctx := n.route(ctx, req)
	if err := ss.Log(ctx, p); err != nil {
		n.s.log.Debug("log notification not delivered", "session", n.sess.id, "err", err)
	}
}

// route picks the go-sdk session and context to send with: the call's own
// (its POST stream) or the current transport's with a detached context (the
// standalone stream).
func (n notifier) route(ctx context.Context, req *mcp.CallToolRequest) (*mcp.ServerSession, context.Context) {
	if req.Extra != nil && n.sess.postLive(req.Extra.Header.Get(headerPOSTToken)) {
		return req.Session, ctx
	}
	if cur := n.sess.current().serverSession(); cur != nil {
		return cur, context.Background()
	}
	return req.Session, context.Background()
}

// trackPOST registers a POST being served and returns its token.
func (s *session) trackPOST() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postSeq++
	tok := strconv.FormatUint(s.postSeq, 10)
	if s.livePOSTs == nil {
		s.livePOSTs = map[string]bool{}
	}
	s.livePOSTs[tok] = true
	return tok
}

func (s *session) untrackPOST(tok string) {
	s.mu.Lock()
	delete(s.livePOSTs, tok)
	s.mu.Unlock()
}

func (s *session) postLive(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.livePOSTs[tok]
}
