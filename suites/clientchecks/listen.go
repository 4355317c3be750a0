package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// CLI-LISTEN-AGAIN's timings: the first listen stream stays open
// listenHeld before the server cuts it (so that a second stream the
// client opened beside it is seen open at the same time), and the client
// must listen again within listenAgainWithin of the cut.
const (
	listenHeld        = 300 * time.Millisecond
	listenAgainWithin = 3 * time.Second
	// listenSent is how many notifications the new stream delivers.
	listenSent = 2
)

const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listenFilter is subscriptions/listen's notifications parameter.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// filter returns a listen request's filter; ok is false without one.
func (x exchange) filter() (f listenFilter, ok bool) {
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if json.Unmarshal(x.RPC.Params, &p) != nil || p.Notifications == nil {
		return f, false
	}
	return *p.Notifications, true
}

// change is a notification the filter opts in to ("" if none): the one
// the scripted server sends.
func (f listenFilter) change() (method string, params map[string]any) {
	switch {
	case f.ToolsListChanged:
		return "notifications/tools/list_changed", map[string]any{}
	case f.PromptsListChanged:
		return "notifications/prompts/list_changed", map[string]any{}
	case f.ResourcesListChanged:
		return "notifications/resources/list_changed", map[string]any{}
	case len(f.ResourceSubscriptions) > 0:
		return "notifications/resources/updated", map[string]any{"uri": f.ResourceSubscriptions[0]}
	}
	return "", nil
}

func isListen(x exchange) bool {
	return x.Method == http.MethodPost && x.RPC.Method == "subscriptions/listen"
}

// serveListen answers listen x as a 2026-07-28 server: its
// acknowledgement (honouring the whole filter), then either a cut after
// listenHeld, without the completion response, or listenSent change
// notifications on a stream held open until the client closes it.
func (s *scriptedServer) serveListen(x *exchange, w http.ResponseWriter, r *http.Request, cut bool) {
	f, _ := x.filter()
	method, params := f.change()
	if method == "" {
		s.rec.note(x, "refused: the listen opts in to no notification")
		w.Header().Set("Content-Type", wire.MediaTypeJSON)
		w.WriteHeader(http.StatusBadRequest)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": x.RPC.ID, "error": map[string]any{"code": -32602, "message": "subscriptions/listen needs params.notifications, the notification types to receive"}})
		w.Write(body)
		return
	}
	w.Header().Set("Content-Type", wire.MediaTypeSSE)
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(method string, params map[string]any) {
		p := map[string]any{"_meta": map[string]any{metaSubscriptionID: x.RPC.ID}}
		for k, v := range params {
			p[k] = v
		}
		data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": p})
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
		rc.Flush()
	}
	send("notifications/subscriptions/acknowledged", map[string]any{"notifications": f})
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
		case <-s.closing:
		}
		return false
	}
	if cut {
		s.rec.note(x, "acknowledged; the stream is cut %v later without the subscription's completion response (an unexpected disconnect)", listenHeld)
		if wait(listenHeld) {
			s.rec.logf("!! listen stream #%d cut by the server, no completion response", x.N)
		}
		return
	}
	s.rec.note(x, "acknowledged, then %d %s; held open", listenSent, method)
	for range listenSent {
		send(method, params)
	}
	wait(time.Hour)
}

// listenChecks are the client checks of subscriptions/listen (2026-07-28).
func listenChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-LISTEN-AGAIN", Level: catalogue.Res, Revisions: catalogue.SessionlessOnly, SpecRef: catalogue.Spec26Listen + "#graceful-closure",
			Summary: "2026-07-28: when its subscriptions/listen stream ends without the subscription's completion response, the client listens again once, within 3 s, for the same notifications, never with two listen streams open at once, and prints what the new stream delivers (\"a transport that closes without it indicates an unexpected disconnect, which the client MAY treat as a trigger to reconnect\"; this project's resilience design makes it a duty)."},
			runs: 1, waits: listenHeld + listenAgainWithin, body: func(ctx context.Context, e *clientEnv) {
				var listens atomic.Int32
				e.srv.setHook(func(x *exchange, w http.ResponseWriter, r *http.Request) bool {
					if !isListen(*x) {
						return false
					}
					e.srv.serveListen(x, w, r, listens.Add(1) == 1)
					return true
				})
				r := e.start(actionRun(contract.ActionListen))
				first := e.waitForDuring(ctx, r, "a subscriptions/listen request", isListen)
				want, ok := first.filter()
				method, _ := want.change()
				if !ok || method == "" {
					e.Failf("#%d: the listen opts in to no notification the server can send (params %s); the contract's listen asks for at least toolsListChanged", first.N, first.RPC.Params)
				}
				second := e.waitForDuring(ctx, r, "a second subscriptions/listen after the server cut the first stream without the subscription's completion response", func(x exchange) bool {
					return isListen(x) && x.N > first.N
				})
				cut := e.rec.all()[first.N-1]
				e.Expect(cut.Done.IsZero() || second.At.Before(cut.Done)).To(BeFalse(),
					"#%d listened again while listen #%d was still open: two listen streams at once (duplicate subscriptions)", second.N, first.N)
				waited := second.At.Sub(cut.Done)
				r.onTime(waited, listenAgainWithin, "#%d listened again only %v after the server cut listen #%d (bound %v)", second.N, waited.Round(10*time.Millisecond), first.N, listenAgainWithin)
				got, _ := second.filter()
				e.Expect(reflect.DeepEqual(got, want)).To(BeTrue(), "#%d listened again for %s, not for what listen #%d asked (%s)", second.N, second.RPC.Params, first.N, first.RPC.Params)
				seen := map[string]bool{}
				r.waitLine(ctx, fmt.Sprintf("the %d %s notifications the new listen stream delivered", listenSent, method), func(l outLine) bool {
					if l.Type == contract.LineNotification && l.Method == method {
						seen[l.At.String()+l.Raw] = true
					}
					return len(seen) >= listenSent
				})
				r.end("it printed the notifications of the new listen stream")
				var all []exchange
				for _, x := range e.exchanges(r.n) {
					if isListen(x) {
						all = append(all, x)
					}
				}
				e.expectCount(all, 2, "one listen cut, so one listen again (no listen storm); subscriptions/listen requests")
			}},
	}
}

// end ends a run that would go on (a listen) once the check has seen what
// it grades: SIGKILL to its process tree, or its page torn down.
func (cr *clientRun) end(why string) {
	cr.mark(report.KindRunOutput, "run %d ended by the check: %s", cr.n, why)
	cr.proc.kill()
	<-cr.done
	cr.e.setRun(0)
}
