package serverchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// listenStream is an open subscriptions/listen stream.
type listenStream struct {
	*collector
	id string // the listen request's id, as JSON text
}

// listen opens a subscriptions/listen stream with request id id (a
// string) and the profile's filter for key, and waits for its first
// message.
func (e *env) listen(ctx context.Context, c *wire.Client, id, key string) *listenStream {
	filter := withKey(e.Config.Listen.Notifications, key)
	req, err := c.NewModernRequestID(ctx, id, "subscriptions/listen", map[string]any{"notifications": filter}, nil)
	e.Expect(err).NotTo(HaveOccurred(), "subscriptions/listen")
	s, err := c.Open(req)
	e.Expect(err).NotTo(HaveOccurred(), "subscriptions/listen %s: want an SSE stream", id)
	raw, _ := json.Marshal(id)
	l := &listenStream{collector: e.collect("listen "+id, s), id: string(raw)}
	e.Eventually(func() bool { return len(l.Messages()) > 0 || l.Ended() }).Within(promptBound).
		Should(BeTrue(), "the first message on listen stream %s", id)
	return l
}

// acknowledged reports whether the stream's first message is its
// acknowledgement, and says what it was otherwise.
func (l *listenStream) acknowledged() (bool, string) {
	msgs := l.Messages()
	if len(msgs) == 0 {
		return false, "nothing (the stream ended)"
	}
	m := msgs[0]
	if m.Method != "notifications/subscriptions/acknowledged" {
		return false, fmt.Sprintf("%s %s%s", m.Method, m.Params, m.Result)
	}
	return true, ""
}

// expectAcknowledged fails unless the stream began with its acknowledgement.
func (e *env) expectAcknowledged(l *listenStream) {
	ok, first := l.acknowledged()
	e.Expect(ok).To(BeTrue(), "listen stream %s began with %s, not notifications/subscriptions/acknowledged", l.id, first)
}

// notifications are the stream's messages of the profile's listen method.
func (e *env) notifications(l *listenStream) []wire.Message {
	var out []wire.Message
	for _, m := range l.Messages() {
		if m.Method == e.Config.Listen.Method {
			out = append(out, m)
		}
	}
	return out
}

// trigger calls the profile's trigger tool for key: one notification of
// the listen method happens for streams listening for key.
func (e *env) trigger(ctx context.Context, c *wire.Client, key string) {
	t := e.Config.Listen.Trigger
	e.callTool(ctx, c, t.Name, argsWithKey(t, key))
}

// awaitNotifications waits until l holds n notifications of the listen method.
func (e *env) awaitNotifications(l *listenStream, n int, what string) []wire.Message {
	var got []wire.Message
	e.Eventually(func() bool { got = e.notifications(l); return len(got) >= n || l.Ended() }).Within(promptBound).
		Should(BeTrue(), "%s", what)
	e.Expect(len(got)).To(BeNumerically(">=", n), "%s: the stream ended after %d", what, len(got))
	return got
}

// listenSettle is how long a check waits for a notification that must
// not come, after one that the same trigger made has arrived elsewhere.
const listenSettle = 300 * time.Millisecond
