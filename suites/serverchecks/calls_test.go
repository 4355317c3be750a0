package serverchecks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// TestExpectDelivered: three notifications split over two streams pass
// in any order across them; a duplicate across streams, disorder within
// one, or a loss fails, saying which notification came on which stream.
func TestExpectDelivered(t *testing.T) {
	cfg := &target.Config{Tools: target.Tools{Notifying: &target.NotifyingTool{
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kit.Check{Entry: catalogue.MustLookup("MSG-ONE-STREAM"), Run: func(k *kit.T) {
				e := &env{T: k, Config: cfg}
				call := &call{token: "tok"}
				e.expectDelivered(call, notesOn(k, "POST", tc.post...), notesOn(k, "GET", tc.get...))
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

// notesOn is a finished stream named name that carried the progress
// notifications of token "tok" with the given progress values.
func notesOn(k *kit.T, name string, progress ...int) *collector {
	c := &collector{t: k, name: name, done: make(chan struct{})}
	close(c.done)
	for _, p := range progress {
		c.events = append(c.events, sse.Event{Data: fmt.Sprintf(
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":%d}}`, p)})
	}
	return c
}
