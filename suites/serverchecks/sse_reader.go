package serverchecks

import (
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/sse"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// sseReader reads an SSE stream in the background and keeps every event,
// so a wait can poll what arrived and still see a stream that never ends.
// A check's collector and the fixtures' tests both read through it.
type sseReader struct {
	s      *wire.Stream
	mu     sync.Mutex
	events []sse.Event
	idAt   time.Time // when the last event with an id arrived
	err    error     // what ended the stream (io.EOF when the server did)
	done   chan struct{}
}

// readSSE starts reading s.
func readSSE(s *wire.Stream) *sseReader {
	r := &sseReader{s: s, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			ev, err := s.Next()
			r.mu.Lock()
			if err != nil {
				r.err = err
				r.mu.Unlock()
				return
			}
			r.events = append(r.events, ev)
			if ev.ID != "" {
				r.idAt = time.Now()
			}
			r.mu.Unlock()
		}
	}()
	return r
}

// Close closes the stream's connection and waits for the reader.
func (r *sseReader) Close() {
	r.s.Close()
	<-r.done
}

// Events returns the events read so far.
func (r *sseReader) Events() []sse.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sse.Event(nil), r.events...)
}

// Ended reports whether the stream ended (EOF or a read error).
func (r *sseReader) Ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// LastID returns the id of the last event that carried one.
func (r *sseReader) LastID() string {
	evs := r.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].ID != "" {
			return evs[i].ID
		}
	}
	return ""
}

// sinceLastID is how long ago the last event with an id arrived.
func (r *sseReader) sinceLastID() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idAt.IsZero() {
		return 0
	}
	return time.Since(r.idAt)
}

// firstEvent returns a stream's first event that is more than a bare
// retry field (sse.Event.RetryOnly): a server may set the reconnection
// delay before it primes the stream, and that block is neither the
// stream's first message nor its first id. ok is false when there is no
// such event yet.
func firstEvent(evs []sse.Event) (first sse.Event, ok bool) {
	for _, ev := range evs {
		if !ev.RetryOnly() {
			return ev, true
		}
	}
	return sse.Event{}, false
}

// primes reports whether ev is a priming event: an id to resume from,
// and no data.
func primes(ev sse.Event) bool {
	return ev.HasID && ev.ID != "" && strings.TrimSpace(ev.Data) == ""
}
