package serverchecks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// listenChecks are the checks of subscriptions/listen (2026-07-28), the
// long-lived stream of change notifications.
func listenChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "LISTEN-ACK-FIRST", Level: catalogue.Must, Section: "listen", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Listen + "#acknowledgment", Needs: []catalogue.Key{catalogue.KeyListen},
			Summary: "2026-07-28: the first message of a subscriptions/listen stream is notifications/subscriptions/acknowledged, carrying the agreed notifications and the listen's id in _meta io.modelcontextprotocol/subscriptionId (\"The server MUST send notifications/subscriptions/acknowledged as the first message\")."},
			body: func(ctx context.Context, e *env) {
				l := e.listen(ctx, e.C, "ack-"+newKey(), newKey())
				e.expectAcknowledged(l)
				ack := l.Messages()[0]
				e.Expect(subscriptionOf(ack)).To(Equal(l.id), "the acknowledgement's _meta[%q] (params %s); it names the listen request's id", metaSubscriptionID, ack.Params)
				e.Expect(string(ack.Params)).To(ContainSubstring(`"notifications"`), "the acknowledgement has no notifications: the filter the server agreed to")
			}},

		{Entry: catalogue.Entry{ID: "LISTEN-ONLY-REQUESTED", Level: catalogue.Must, Section: "listen", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Listen + "#opening-a-stream", Needs: []catalogue.Key{catalogue.KeyListen},
			Summary: "2026-07-28: a listen stream whose filter names another key gets none of the notifications a trigger makes for the first one's (\"The server MUST NOT send notification types the client has not explicitly requested\")."},
			body: func(ctx context.Context, e *env) {
				mine, other := newKey(), newKey()
				a := e.listen(ctx, e.C, "requested-"+newKey(), mine)
				b := e.listen(ctx, e.C, "unrequested-"+newKey(), other)
				e.expectAcknowledged(a)
				e.expectAcknowledged(b)
				e.trigger(ctx, e.C, mine)
				e.awaitNotifications(a, 1, "the notification the trigger makes, on the stream that asked for it")
				e.Pause(listenSettle)
				e.Expect(e.unasked(b)).To(BeEmpty(), "a listen stream whose filter named another key got the trigger's notifications")
			}},

		{Entry: catalogue.Entry{ID: "LISTEN-TAGGED", Level: catalogue.Must, Section: "listen", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.SEP2575, Needs: []catalogue.Key{catalogue.KeyListen},
			Summary: "2026-07-28: two listen streams with the same filter each get the trigger's notification tagged with their own listen's id (\"every notification delivered as part of an active subscription MUST include the subscription's request ID in _meta\")."},
			body: func(ctx context.Context, e *env) {
				key := newKey()
				ls := []*listenStream{e.listen(ctx, e.C, "tag-a-"+newKey(), key), e.listen(ctx, e.C, "tag-b-"+newKey(), key)}
				e.trigger(ctx, e.C, key)
				for _, l := range ls {
					for _, m := range e.awaitNotifications(l, 1, "the trigger's notification on listen stream "+l.id) {
						e.Expect(subscriptionOf(m)).To(Equal(l.id), "a notification on listen stream %s is tagged %s: %s %s", l.id, orNone(subscriptionOf(m)), m.Method, m.Params)
					}
				}
			}},

		{Entry: catalogue.Entry{ID: "LISTEN-RENEW", Level: catalogue.Res, Section: "listen", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.ResilienceProfile + "listening-across-a-cut", Needs: []catalogue.Key{catalogue.KeyListen},
			Summary: "2026-07-28: after the harness cuts a listen stream, a new subscriptions/listen is acknowledged and gets the notifications of what happens after it, tagged with its own id, none with the old one's."},
			body: func(ctx context.Context, e *env) {
				key := newKey()
				old := e.listen(ctx, e.ownClient(), "old-"+newKey(), key)
				e.expectAcknowledged(old)
				e.trigger(ctx, e.C, key)
				e.awaitNotifications(old, 1, "the trigger's notification before the cut")
				e.Logf("!! cutting the listen stream")
				old.Close()
				l := e.listen(ctx, e.C, "new-"+newKey(), key)
				e.expectAcknowledged(l)
				e.trigger(ctx, e.C, key)
				got := e.awaitNotifications(l, 1, "the notification of a trigger after the new listen")
				for _, m := range got {
					e.Expect(subscriptionOf(m)).To(Equal(l.id), "after the cut, the new listen stream got a notification tagged %s (the old listen was %s): %s", orNone(subscriptionOf(m)), old.id, m.Params)
				}
			}},

		{Entry: catalogue.Entry{ID: "LISTEN-GRACEFUL-CLOSE", Level: catalogue.Should, Section: "listen", Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Listen + "#graceful-closure", Needs: []catalogue.Key{catalogue.KeyListen}, Restarts: true, Exclusive: true,
			Summary: "2026-07-28: a server restarted (SIGTERM) ends an open listen stream with the listen's completion response, tagged with its id, before closing it (\"it SHOULD respond to the original subscriptions/listen request with a completion result before closing the stream\") Cancellation says otherwise (\"A server MUST send notifications/cancelled referencing a subscriptions/listen request ID when it tears down that subscription stream\"); until the two pages agree the completion result is graded, as the schema's SubscriptionsListenResult, and a notifications/cancelled for the listen, before the result or after it, is neither required nor penalised, nor taken for the result."},
			body: func(ctx context.Context, e *env) {
				l := e.listen(ctx, e.C, "graceful-"+newKey(), newKey())
				e.expectAcknowledged(l)
				e.Logf("!! F-RESTART: restarting the target")
				e.Expect(e.target.Restart(ctx)).To(Succeed(), "restart the target")
				e.Eventually(l.Ended).Within(promptBound).Should(BeTrue(), "the listen stream to end at the restart")
				msgs := l.Messages()
				last, final := endOfListen(msgs, l.id), msgs[len(msgs)-1]
				if !last.IsResponse() {
					cancelled := ""
					if slices.ContainsFunc(msgs, func(m wire.Message) bool { return cancels(m, l.id) }) {
						cancelled = "; the notifications/cancelled for the listen it sent does not stand for the completion result"
					}
					e.Failf("the listen stream ended at the restart without a response to subscriptions/listen (its last message: %s %s): an abrupt close, not a graceful one%s", quoted(final.Method, 80), quoted(string(final.Params), 200), cancelled)
				}
				e.Expect(string(last.ID)).To(Equal(l.id), "the response that ended the listen stream answers id %s, not the listen's %s", last.ID, l.id)
				e.Expect(last.Error).To(BeNil(), "the listen ended with an error, not its completion result")
				e.Expect(subscriptionOf(last)).To(Equal(l.id), "the completion result's _meta[%q] (%s)", metaSubscriptionID, last.Result)
			}},
	}
}

// endOfListen is the message that ended listen id's stream: its last,
// passing over any notifications/cancelled for id after it. Graceful
// Closure (subscriptions.mdx) asks for the completion result alone;
// cancellation.mdx says a server "MUST send notifications/cancelled" for
// the listen when it tears the stream down. Until the two pages agree the
// result is graded and the cancellation is neither required nor
// penalised, before the result or after it.
func endOfListen(msgs []wire.Message, id string) wire.Message {
	for i := len(msgs) - 1; i > 0; i-- {
		if !cancels(msgs[i], id) {
			return msgs[i]
		}
	}
	return msgs[0]
}

// cancels reports a notifications/cancelled for the request id (JSON text).
func cancels(m wire.Message, id string) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	return m.Method == "notifications/cancelled" && json.Unmarshal(m.Params, &p) == nil && string(bytes.TrimSpace(p.RequestID)) == id
}

// unasked are the notifications of the listen method on l: for a stream
// whose key nothing triggered, notifications it did not ask for.
func (e *env) unasked(l *listenStream) []string {
	var out []string
	for _, m := range e.notifications(l) {
		out = append(out, fmt.Sprintf("%s %s", m.Method, m.Params))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "with nothing"
	}
	return s
}
