// Package nettest has small helpers for tests that cut real TCP
// connections and collect a server's log while it runs.
package nettest

import (
	"context"
	"net"
	"strings"
	"sync"
)

// ConnTracker records a client's TCP connections so a test can cut them
// all at once, as a page refresh or a dropped network does. Use Dial as an
// http.Transport's DialContext.
type ConnTracker struct {
	mu    sync.Mutex
	conns []net.Conn
}

// Dial dials and records the connection.
func (ct *ConnTracker) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		ct.mu.Lock()
		ct.conns = append(ct.conns, c)
		ct.mu.Unlock()
	}
	return c, err
}

// CutAll closes every connection dialled so far.
func (ct *ConnTracker) CutAll() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	for _, c := range ct.conns {
		c.Close()
	}
	ct.conns = nil
}

// SyncBuffer is a strings.Builder safe for concurrent writes (a logger's
// output read by the test).
type SyncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
