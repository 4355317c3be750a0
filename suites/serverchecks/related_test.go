package serverchecks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// streamWith is a finished stream named name carrying the given events:
// "a3" is the progress notification 3 of token "a", "log" a logging
// notification, "r:7" the response to request 7.
func streamWith(k *kit.T, name string, evs ...string) *collector {
	c := &collector{sseReader: endedReader(), t: k, name: name}
	for _, ev := range evs {
		var data string
		switch {
		case ev == "log":
			data = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"step"}}`
		case strings.HasPrefix(ev, "r:"):
			data = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, ev[2:])
		default:
			data = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":%s}}`, ev[:1], ev[1:])
		}
		c.events = append(c.events, sse.Event{Data: data})
	}
	return c
}

// TestUnrelatedNotes: a progress notification on a call's POST stream is
// judged by its token; one of the other call, or of neither, is named
// with its stream and count; logging is not judged.
func TestUnrelatedNotes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  []string
		want  []string
		wantN int // notifications on their own call's stream
	}{
		{"own streams", []string{"a1", "log", "a2", "r:1"}, []string{"b1", "b2", "log", "r:2"}, nil, 4},
		{"B's on A's stream", []string{"a1", "b1", "a2", "b2", "r:1"}, []string{"b3", "r:2"},
			[]string{"A carried 2 progress notifications of call B (token b)"}, 3},
		{"a stranger's", []string{"a1", "z1", "r:1"}, []string{"r:2"},
			[]string{`A carried 1 progress notification of token "z", which is neither call's`}, 1},
		{"only logging", []string{"log", "r:1"}, []string{"log", "r:2"}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wrong []string
			var own int
			c := kit.Check{Entry: mustLookup("MSG-RELATED-STREAM"), Run: func(k *kit.T) {
				a := &call{token: "a", id: "1", post: streamWith(k, "A", tc.a...)}
				b := &call{token: "b", id: "2", post: streamWith(k, "B", tc.b...)}
				wrong, own = unrelatedNotes([]*call{a, b})
			}}
			if r := kit.Execute(context.Background(), c, 5*time.Second); r.State != kit.Passed {
				t.Fatalf("%v: %s", r.State, r.Message)
			}
			if !slices.Equal(wrong, tc.want) || own != tc.wantN {
				t.Fatalf("got %q and %d own, want %q and %d", wrong, own, tc.want, tc.wantN)
			}
		})
	}
}

// TestAwaitPostNotesSaysWhere: a call answered without its notifications
// on its POST stream is skipped saying where they came instead, when
// another stream the check holds carried them, or that none did.
func TestAwaitPostNotesSaysWhere(t *testing.T) {
	cfg := &target.Profile{Tools: target.Tools{Notifying: &target.NotifyingTool{
		Method: "notifications/progress", Notifications: 5}}}
	for _, tc := range []struct {
		name, want string
		other      []string
	}{
		{"on another call's stream", "the call answered with 1 of its notifications on its POST stream: the target sent them elsewhere: 4 came on call A's POST stream", []string{"a1", "b1", "b2", "b3", "b4", "r:1"}},
		{"nowhere held", "none came on call A's POST stream either", []string{"a1", "r:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kit.Check{Entry: mustLookup("EVT-REPLAY-STREAM"), Run: func(k *kit.T) {
				e := &env{T: k, Config: cfg}
				b := &call{token: "b", id: "2", post: streamWith(k, "call B's POST stream", "b5", "r:2")}
				e.awaitPostNotes(k.Context(), b, 2, streamWith(k, "call A's POST stream", tc.other...))
			}}
			r := kit.Execute(context.Background(), c, 5*time.Second)
			if r.State != kit.Skipped || !strings.Contains(r.Message, tc.want) {
				t.Fatalf("%v %q, want a skip containing %q", r.State, r.Message, tc.want)
			}
		})
	}
}

// TestProgressByStream: each call's progress values are listed by stream,
// "none" where a stream carried none of them.
func TestProgressByStream(t *testing.T) {
	var got string
	c := kit.Check{Entry: mustLookup("MSG-RELATED-STREAM"), Run: func(k *kit.T) {
		a := &call{token: "a", id: "1", post: streamWith(k, "A", "a1", "b1", "log", "a2", "r:1")}
		b := &call{token: "b", id: "2", post: streamWith(k, "B", "b2", "r:2")}
		got = progressByStream([]*call{a, b}, []*collector{a.post, b.post, streamWith(k, "GET")})
	}}
	if r := kit.Execute(context.Background(), c, 5*time.Second); r.State != kit.Passed {
		t.Fatalf("%v: %s", r.State, r.Message)
	}
	want := "call A's progress by stream: A: 1 2; B: none; GET: none; call B's progress by stream: A: 1; B: 2; GET: none"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// endedReader is the reader of a stream that has ended, with no events yet.
func endedReader() *sseReader {
	r := &sseReader{done: make(chan struct{})}
	close(r.done)
	return r
}
