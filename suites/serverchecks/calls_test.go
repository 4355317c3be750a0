package serverchecks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// TestExpectDelivered: three notifications split over two streams pass
// in any order across them; a duplicate across streams, disorder within
// one, or a loss fails, saying which notification came on which stream.
func TestExpectDelivered(t *testing.T) {
	cfg := &target.Profile{Tools: target.Tools{Notifying: &target.NotifyingTool{
		Method: "notifications/progress", Notifications: 3}}}
	for _, tc := range []struct {
		name      string
		post, get []int
		want      string // "" for a pass
	}{
		{"split, interleaved", []int{1, 3}, []int{2}, ""},
		{"twice", []int{1, 2, 3}, []int{2}, "notification delivered twice (on POST and GET): "},
		{"out of order", []int{2, 1}, []int{3}, "notifications out of order on POST; by stream: POST: 2 1; GET: 3"},
		{"lost", []int{1}, []int{3}, "every notification of the call exactly once: got 2 of 3; by stream: POST: 1; GET: 3"},
		{"cancelled", []int{1}, nil, "every notification of the call exactly once: got 1 of 3; the call ended with JSON-RPC error -32603: context canceled (on GET) after 1 of its 3 notifications"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kit.Check{Entry: mustLookup("MSG-ONE-STREAM"), Run: func(k *kit.T) {
				e := &env{T: k, Config: cfg}
				call := &call{token: "tok", id: "7"}
				get := notesOn(k, "GET", tc.get...)
				if tc.name == "cancelled" {
					get.events = append(get.events, sse.Event{Data: `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}`})
				}
				e.expectDelivered(call, notesOn(k, "POST", tc.post...), get)
			}}
			r := kit.Execute(context.Background(), c, 5*time.Second)
			switch {
			case tc.want == "" && r.State != kit.Passed:
				t.Fatalf("%v: %s", r.State, r.Message)
			case tc.want != "" && (r.State != kit.Failed || !strings.Contains(r.Message, tc.want)):
				t.Fatalf("%v %q, want a failure containing %q", r.State, r.Message, tc.want)
			}
		})
	}
}

// TestEndedEarly: an error answering the call before all of its
// notifications came says how the call ended, on which stream, after how
// many; a result, or an error after every notification, says nothing.
func TestEndedEarly(t *testing.T) {
	cfg := &target.Profile{Tools: target.Tools{Notifying: &target.NotifyingTool{
		Method: "notifications/progress", Notifications: 3}}}
	const canceled = `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"context canceled"}}`
	for _, tc := range []struct {
		name   string
		post   []int
		answer string // the call's response, on the resumed stream
		want   string // "" for nothing to say
	}{
		{"cancelled", []int{1}, canceled, "the call ended with JSON-RPC error -32603: context canceled (on resumed) after 1 of its 3 notifications"},
		{"answered", []int{1}, `{"jsonrpc":"2.0","id":7,"result":{}}`, ""},
		{"error after all", []int{1, 2, 3}, canceled, ""},
		{"another call's error", []int{1}, `{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"x"}}`, ""},
		{"no answer", []int{1}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			c := kit.Check{Entry: mustLookup("REPLAY-GAP"), Run: func(k *kit.T) {
				e := &env{T: k, Config: cfg}
				resumed := notesOn(k, "resumed")
				if tc.answer != "" {
					resumed.events = append(resumed.events, sse.Event{Data: tc.answer})
				}
				got = e.endedEarly(&call{token: "tok", id: "7"}, notesOn(k, "POST", tc.post...), resumed)
			}}
			if r := kit.Execute(context.Background(), c, 5*time.Second); r.State != kit.Passed {
				t.Fatalf("%v: %s", r.State, r.Message)
			}
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// notesOn is a finished stream named name that carried the progress
// notifications of token "tok" with the given progress values.
func notesOn(k *kit.T, name string, progress ...int) *collector {
	c := &collector{sseReader: endedReader(), t: k, name: name}
	for _, p := range progress {
		c.events = append(c.events, sse.Event{Data: fmt.Sprintf(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":%d}}`, p)})
	}
	return c
}
