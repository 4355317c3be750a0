package server

import (
	"net/http"
	"time"
)

// resumeWait bounds how long a resume of a POST stream waits for the
// request that still holds the stream to end. Right after a cut the server
// may not have noticed it yet, and the go-sdk answers such a resume with
// 409; the client did nothing wrong, so it is served once the cut is seen.
const resumeWait = 2 * time.Second

// serveResume hands a resume of a POST stream to the go-sdk, again each
// time a request of the session ends, while the go-sdk answers 409 and
// resumeWait has not passed.
func (s *Server) serveResume(w *deadlineWriter, r *http.Request, sess *session, gen *generation) {
	timer := time.NewTimer(resumeWait) // the network's time, not the session clock
	defer timer.Stop()
	for {
		ended := sess.nextEnd()
		gen.handler.ServeHTTP(w, r)
		if w.errs.status != http.StatusConflict {
			return
		}
		select {
		case <-ended:
			w.errs.reset()
		case <-timer.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// nextEnd returns a channel closed when the next request of the session ends.
func (s *session) nextEnd() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endCh == nil {
		s.endCh = make(chan struct{})
	}
	return s.endCh
}
