package serverchecks

import (
	"net"
	"net/http"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that a client which stops reading can wedge.
func init() {
	servers.Register(
		servers.Fixture{
			Name: "slow-reader-blocks",
			About: "writes to a client have no deadline and hold a per-session lock: a client that stops reading " +
				"one stream blocks every other request of its session (8 KB socket send buffers)",
			Breaks: []string{"SLOW-READER"},
			Wrap:   sessionWriteLock,
			Listen: smallSendBuffers,
		},
	)
}

// sendBuffer is the socket send buffer of slow-reader-blocks: small, so a
// write to a client that stopped reading blocks after a few KB.
const sendBuffer = 8 << 10

// smallSendBuffers gives every accepted connection a small send buffer.
func smallSendBuffers(ln net.Listener) net.Listener { return sendBufferListener{ln} }

type sendBufferListener struct{ net.Listener }

func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	return c, err
}

// sessionWriteLock serialises every write of a session's answers through
// one lock per session, and hides the connection from the server's
// per-write deadlines: a write to a client that stopped reading blocks,
// holding the lock, until that client goes away.
func sessionWriteLock(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	locks := map[string]*sync.Mutex{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		if sid == "" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		l := locks[sid]
		if l == nil {
			l = new(sync.Mutex)
			locks[sid] = l
		}
		mu.Unlock()
		next.ServeHTTP(&lockedWriter{w: w, mu: l}, r)
	})
}

// lockedWriter holds its session's lock for every write and flush. It has
// no SetWriteDeadline and no Unwrap, so http.ResponseController cannot
// set deadlines through it.
type lockedWriter struct {
	w  http.ResponseWriter
	mu *sync.Mutex
}

func (l *lockedWriter) Header() http.Header { return l.w.Header() }

func (l *lockedWriter) WriteHeader(code int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.WriteHeader(code)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// FlushError is what http.ResponseController.Flush calls.
func (l *lockedWriter) FlushError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return http.NewResponseController(l.w).Flush()
}

// Flush is http.Flusher.
func (l *lockedWriter) Flush() { _ = l.FlushError() }
