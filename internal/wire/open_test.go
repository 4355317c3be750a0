package wire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestOpenNotAStream: a GET answered 200 with another Content-Type than
// text/event-stream, and a body that never ends (a stream mislabelled),
// is an error at once, saying what came, not a wait for the body's end.
func TestOpenNotAStream(t *testing.T) {
	old := errorBodyWait
	errorBodyWait = 100 * time.Millisecond
	defer func() { errorBodyWait = old }()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := 0; ; i++ {
			fmt.Fprintf(w, "id: %d\ndata: {}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	defer close(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := New(srv.URL).OpenGET(ctx, "sid", "")
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusOK || ctx.Err() != nil {
		t.Fatalf("OpenGET = %v (context %v), want a status error for a 200 that is no stream", err, ctx.Err())
	}
	for _, want := range []string{"HTTP 200 with Content-Type application/json, not an SSE stream", "id: 0", "had not ended after 100ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
