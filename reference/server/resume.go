package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

var errReplayFailed = errors.New("the replay failed after the stream opened")

// resumePOST serves a GET resuming a POST stream (EVT-REPLAY-POST): the
// go-sdk replays the stream and continues it live while its calls run. The
// generation that opened the stream serves it, as its carrier (see carry).
// A stream whose calls are answered is only replayed, from the shared
// store, by any generation.
func (s *Server) resumePOST(w *deadlineWriter, r *http.Request, sess *session, gen *generation, stream string) {
	p := sess.postOfStream(stream)
	if p == nil {
		s.replayPOST(w, r, sess, gen, stream)
		return
	}
	owner, ok := sess.acquire(p.gen)
	if !ok {
		s.writeSessionGone(w)
		return
	}
	defer owner.release()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	car, continued, err := sess.carry(p, cancel)
	if err != nil {
		writeRPCError(w, http.StatusConflict, CodeInvalidRequest, "Conflict: "+err.Error(), nil)
		return
	}
	defer sess.uncarry(p, car)
	primingID := ""
	if revisionAtLeast(r.Header.Get(headerProtocolVersion), primingVersion) {
		primingID = r.Header.Get(keyLastEventID)
	}
	sw := openSSE(w, primingID)
	sess.resumed(ctx, p, continued)
	owner.handler.ServeHTTP(sw, r.WithContext(ctx))
}

// replayPOST serves a resume of a finished POST stream: the go-sdk replays
// it. It lets one request at a time replay a stream and answers any other
// 409, so a resume takes the stream over from the previous one (which may
// still be writing its last bytes to a client that has moved on) and waits
// for it to let go, at most handoffTimeout, as a resume of a running stream
// does (see carry).
func (s *Server) replayPOST(w *deadlineWriter, r *http.Request, sess *session, gen *generation, stream string) {
	car, err := sess.takeReplay(stream, w.kill)
	if err != nil {
		writeRPCError(w, http.StatusConflict, CodeInvalidRequest, "Conflict: "+err.Error(), nil)
		return
	}
	defer sess.endReplay(stream, car)
	gen.handler.ServeHTTP(w, r)
}

// openSSE sends a stream's headers at once, with a priming event whose id
// is the Last-Event-ID resumed from, when primingID is set. The go-sdk
// sends headers with the first event, and a resumed stream whose missed
// messages went to the standalone stream may wait until the call ends for
// one, holding a client that waits for headers or an event before it reads.
// Resuming from the priming event's id again replays the same messages.
func openSSE(w http.ResponseWriter, primingID string) http.ResponseWriter {
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	if primingID != "" {
		fmt.Fprintf(w, "id: %s\ndata: \n\n", primingID)
	}
	http.NewResponseController(w).Flush()
	return &openedSSE{ResponseWriter: w}
}

// openedSSE is a stream whose 200 is sent. An error status the go-sdk
// writes afterwards (the store evicted the events between the check and the
// replay) ends the stream instead of putting the error text into it.
type openedSSE struct {
	http.ResponseWriter
	failed bool
}

func (o *openedSSE) WriteHeader(code int) { o.failed = o.failed || code != http.StatusOK }

func (o *openedSSE) Write(p []byte) (int, error) {
	if o.failed {
		return 0, errReplayFailed
	}
	return o.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach Flush on the real writer.
func (o *openedSSE) Unwrap() http.ResponseWriter { return o.ResponseWriter }
