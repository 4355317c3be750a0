package toxics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// wait bounds every blocking step of a test, so a failure never hangs.
const wait = 5 * time.Second

// checkLeaks fails the test if goroutines started during it are still
// running shortly after every other cleanup has run. Call it first.
func checkLeaks(t *testing.T) {
	t.Helper()
	base := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(wait)
		for runtime.NumGoroutine() > base {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines: %d before, %d after\n%s", base, runtime.NumGoroutine(), buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// newServer returns a Server closed at cleanup.
func newServer(t *testing.T) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
	})
	return s
}

// newProxy returns a proxy in front of up.
func newProxy(t *testing.T, s *Server, up *upstream, opts ...ProxyOption) *Proxy {
	t.Helper()
	p, err := s.NewProxy(t.Name(), up.addr(), opts...)
	if err != nil {
		t.Fatalf("NewProxy: %v", err)
	}
	return p
}

// upstream is the server behind the proxy. GET /hello answers "hello";
// POST /echo answers the body; GET /stream opens an SSE stream the test
// drives through an sseStream; GET /flood writes events as fast as it can.
type upstream struct {
	srv     *httptest.Server
	streams chan *sseStream
	flooded chan struct{} // a /flood handler wrote another megabyte
	done    chan struct{}
}

// sseStream is one open /stream response on the upstream side.
type sseStream struct {
	cmds    chan string // body text to write and flush; "" ends the response
	results chan error
	ctxDone <-chan struct{} // closed when the server sees the connection go
}

// newUpstream starts the server; it is closed at cleanup, after releasing
// every handler.
func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{streams: make(chan *sseStream, 16), flooded: make(chan struct{}), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "data: not an event, not a stream\n\nhello")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := []byte("data: " + strings.Repeat("x", 16<<10) + "\n\n")
		for i := 1; ; i++ {
			if _, err := w.Write(event); err != nil {
				return
			}
			if i%64 == 0 {
				select {
				case u.flooded <- struct{}{}:
				default:
				}
			}
		}
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		rc.Flush()
		s := &sseStream{cmds: make(chan string), results: make(chan error, 1), ctxDone: r.Context().Done()}
		select {
		case u.streams <- s:
		case <-u.done:
			return
		}
		for {
			select {
			case text := <-s.cmds:
				if text == "" {
					s.results <- nil
					return
				}
				_, err := io.WriteString(w, text)
				if err == nil {
					err = rc.Flush()
				}
				s.results <- err
			case <-r.Context().Done():
				return
			case <-u.done:
				return
			}
		}
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(u.done)
		u.srv.Close()
	})
	return u
}

func (u *upstream) addr() string { return u.srv.Listener.Addr().String() }

// next returns the next /stream the server opened.
func (u *upstream) next(t *testing.T) *sseStream {
	t.Helper()
	select {
	case s := <-u.streams:
		return s
	case <-time.After(wait):
		t.Fatal("upstream: no stream opened")
		return nil
	}
}

// write makes the handler write and flush text; it returns the write's error.
func (s *sseStream) write(t *testing.T, text string) error {
	t.Helper()
	select {
	case s.cmds <- text:
	case <-s.ctxDone:
		return errors.New("stream gone")
	case <-time.After(wait):
		t.Fatal("upstream: handler not taking writes")
	}
	select {
	case err := <-s.results:
		return err
	case <-time.After(wait):
		t.Fatal("upstream: write did not finish")
		return nil
	}
}

// mustWrite is write for writes that have to succeed.
func (s *sseStream) mustWrite(t *testing.T, text string) {
	t.Helper()
	if err := s.write(t, text); err != nil {
		t.Fatalf("upstream write: %v", err)
	}
}

// waitGone waits until the server sees the stream's connection closed.
func (s *sseStream) waitGone(t *testing.T) {
	t.Helper()
	select {
	case <-s.ctxDone:
	case <-time.After(wait):
		t.Fatal("upstream did not see the connection close")
	}
}

// client is a raw HTTP/1.1 connection, so reads can have deadlines and
// errors keep their cause.
type client struct {
	conn net.Conn
	br   *bufio.Reader
	body *bufio.Reader // of the last response
}

// dial connects to addr; the connection is closed at cleanup.
func dial(t *testing.T, addr string) *client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{conn: conn, br: bufio.NewReader(conn)}
}

// get sends a GET and reads the response head; the body is left in c.body.
func (c *client) get(t *testing.T, path string) *http.Response {
	t.Helper()
	c.conn.SetDeadline(time.Now().Add(wait))
	if _, err := fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: upstream\r\n\r\n", path); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	c.body = bufio.NewReader(resp.Body)
	return resp
}

// openStream opens /stream through addr and returns both ends.
func openStream(t *testing.T, addr string, u *upstream) (*client, *sseStream) {
	t.Helper()
	c := dial(t, addr)
	c.get(t, "/stream")
	return c, u.next(t)
}

// event reads the next SSE event's data, skipping comment blocks, within d.
func (c *client) event(d time.Duration) (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(d))
	var data []string
	has := false
	for {
		line, err := c.body.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if has {
				return strings.Join(data, "\n"), nil
			}
		case strings.HasPrefix(line, ":"):
		default:
			has = true
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
	}
}

// mustEvent reads one event and checks its data.
func (c *client) mustEvent(t *testing.T, want string) {
	t.Helper()
	got, err := c.event(wait)
	if err != nil {
		t.Fatalf("reading event %q: %v", want, err)
	}
	if got != want {
		t.Fatalf("event data = %q, want %q", got, want)
	}
}

// isTimeout reports a read that ended at its deadline.
func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// httpGet fetches url with a client of its own and returns the body.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: wait}
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: body: %v", url, err)
	}
	return string(b)
}

// httpPost posts body to url with a client of its own and returns the answer.
func httpPost(t *testing.T, url string, body []byte) []byte {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 4 * wait}
	resp, err := hc.Post(url, "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: body: %v", url, err)
	}
	return b
}

// checkHello checks that a fresh connection through p works.
func checkHello(t *testing.T, p *Proxy) {
	t.Helper()
	if got := httpGet(t, "http://"+p.Addr()+"/hello"); !strings.HasSuffix(got, "hello") {
		t.Fatalf("GET /hello through the proxy = %q", got)
	}
}
