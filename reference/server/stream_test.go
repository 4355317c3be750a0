package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
)

// TestStreamWriter: the opening follows the go-sdk's 200 and only counts its
// messages as delivered; a closed writer takes a retry hint and then nothing.
func TestStreamWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	var delivered []int
	w := &streamWriter{ResponseWriter: rec, onEvent: func(i int) { delivered = append(delivered, i) }}
	w.open("_5", []eventstore.Event{{Index: 3, Data: []byte(`{"m":3}`)}, {Index: 4, Data: []byte(`{"m":4}`)}})
	w.WriteHeader(http.StatusOK)
	if len(delivered) != 0 {
		t.Fatalf("delivered %v before a flush", delivered)
	}
	// The go-sdk follows its 200 with a comment and a flush, which sends
	// the opening too.
	if _, err := w.Write([]byte(": ok\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(delivered, []int{4}) {
		t.Fatalf("delivered %v after the first flush, want [4]", delivered)
	}
	if _, err := w.Write([]byte("event: message\nid: _6\ndata: {\"m\":6}\n\n")); err != nil {
		t.Fatal(err)
	}
	w.close(time.Second)
	if _, err := w.Write([]byte("event: message\nid: _7\ndata: {\"m\":7}\n\n")); !errors.Is(err, errStreamClosed) {
		t.Fatalf("write after close: %v, want errStreamClosed", err)
	}
	want := "id: _5\ndata: \n\n" +
		"event: message\nid: _3\ndata: {\"m\":3}\n\n" +
		"event: message\nid: _4\ndata: {\"m\":4}\n\n" +
		": ok\n\n" +
		"event: message\nid: _6\ndata: {\"m\":6}\n\n" +
		"retry: 1000\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	if !slices.Equal(delivered, []int{4, 6}) {
		t.Fatalf("delivered %v, want [4 6]", delivered)
	}

	// Any other status goes out as the go-sdk wrote it, without the opening.
	rec = httptest.NewRecorder()
	w = &streamWriter{ResponseWriter: rec}
	w.open("_5", []eventstore.Event{{Index: 3, Data: []byte(`{"m":3}`)}})
	http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
	if rec.Code != http.StatusConflict || rec.Body.String() != "stream ID conflicts with ongoing stream\n" {
		t.Fatalf("error answer: %d %q", rec.Code, rec.Body.String())
	}
}

// TestStreamWriterReplacedBeforeHeader: a GET replaced before the go-sdk
// wrote its 200 still answers with the retry hint, not an empty 200.
func TestStreamWriterReplacedBeforeHeader(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &streamWriter{ResponseWriter: rec}
	w.open("_0", nil)
	w.close(1500 * time.Millisecond)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(": ok\n\n")); !errors.Is(err, errStreamClosed) {
		t.Fatalf("write after close: %v", err)
	}
	if got := rec.Body.String(); got != "retry: 1500\n\n" {
		t.Fatalf("body %q, want only the retry hint", got)
	}
}

// TestStreamWriterNotify: an injected notification waits for the go-sdk's
// 200, goes between whole events without an id, counts as no event of its
// own (the go-sdk's event it flushes does), and stops at close.
func TestStreamWriterNotify(t *testing.T) {
	rec := httptest.NewRecorder()
	var delivered []int
	w := &streamWriter{ResponseWriter: rec, onEvent: func(i int) { delivered = append(delivered, i) }}
	if err := w.notify([]byte(`{"n":0}`)); err != nil || rec.Body.Len() != 0 {
		t.Fatalf("notify before the header: %v, wrote %q", err, rec.Body.String())
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("event: message\nid: _6\ndata: {\"m\":6}\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.notify([]byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("event: message\nid: _7\ndata: {\"m\":7}\n\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushError(); err != nil {
		t.Fatal(err)
	}
	w.close(time.Second)
	if err := w.notify([]byte(`{"n":2}`)); err != nil {
		t.Fatalf("notify after close: %v", err)
	}
	want := "event: message\nid: _6\ndata: {\"m\":6}\n\n" +
		"event: message\ndata: {\"n\":1}\n\n" +
		"event: message\nid: _7\ndata: {\"m\":7}\n\n" +
		"retry: 1000\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant:\n%q", got, want)
	}
	if !slices.Equal(delivered, []int{6, 7}) {
		t.Fatalf("delivered %v, want [6 7]", delivered)
	}
}

// TestLastEventIDKey: the key looked up is the canonical form of the
// header's name, so a lookup finds what a client sent in any case.
func TestLastEventIDKey(t *testing.T) {
	if got := http.CanonicalHeaderKey(headerLastEventID); got != keyLastEventID {
		t.Fatalf("canonical %q is %q, not %q", headerLastEventID, got, keyLastEventID)
	}
}
