package server_test

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestResumeWaitsForCut: a resume of a POST stream that reaches the server
// before it has noticed the cut of the request holding that stream waits
// for the request to end, instead of being refused with 409.
func TestResumeWaitsForCut(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 2)
	e.step()
	seen := next(t, post, 2)

	type opened struct {
		st  *wire.Stream
		err error
	}
	res := make(chan opened, 1)
	go func() {
		st, err := wire.New(e.url).OpenGET(e.ctx(), sid, seen[1].ID)
		res <- opened{st, err}
	}()
	eventually(t, "the resume to reach the server", func() bool { return e.srv.Serving() == 2 || len(res) > 0 })
	e.conns.CutAll()
	e.step() // a resumed POST stream answers with its first event
	r := <-res
	if r.err != nil {
		t.Fatalf("resume racing the cut: %v", r.err)
	}
	defer r.st.Close()
	for {
		ev, err := r.st.Next()
		if err != nil {
			t.Fatalf("resumed stream ended without the result: %v", err)
		}
		if strings.Contains(ev.Data, "completed 2 steps") {
			return
		}
	}
}

// TestBackToBackResumes: resumes of a finished POST stream that follow each
// other without waiting for the server to finish the previous one (the
// client reads the response and hangs up) are each served; a resume takes
// the stream over from the previous one, never 409.
func TestBackToBackResumes(t *testing.T) {
	e := newEnv(t, noKeepAlive)
	sid := e.connect(e.c)
	post := e.startLongOperation(e.c, sid, 1)
	e.step()
	events := readAll(t, post)
	first := events[0].ID
	c := e.client()
	for i := range 500 {
		st, err := c.OpenGET(e.ctx(), sid, first)
		if err != nil {
			t.Fatalf("resume %d: %v", i+1, err)
		}
		for {
			ev, err := st.Next()
			if err != nil {
				t.Fatalf("resume %d ended without the response: %v", i+1, err)
			}
			if strings.Contains(ev.Data, "completed 1 steps") {
				break
			}
		}
		st.Close()
	}
}
