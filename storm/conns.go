package storm

import (
	"context"
	"net"
	"sync"
	"time"
)

// conns dials and remembers every open client connection, so that a storm
// can cut them all at once.
type conns struct {
	d    net.Dialer
	mu   sync.Mutex
	open map[*trackedConn]struct{}
}

func newConns() *conns {
	return &conns{d: net.Dialer{Timeout: 10 * time.Second}, open: map[*trackedConn]struct{}{}}
}

type trackedConn struct {
	net.Conn
	c    *conns
	once sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.c.mu.Lock()
		delete(t.c.open, t)
		t.c.mu.Unlock()
	})
	return t.Conn.Close()
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := c.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t := &trackedConn{Conn: nc, c: c}
	c.mu.Lock()
	c.open[t] = struct{}{}
	c.mu.Unlock()
	return t, nil
}

// cut resets every open connection: linger 0 makes Close send a TCP RST,
// as a crashed client or a dropped NAT entry would look to the server.
// It returns how many connections it cut.
func (c *conns) cut() int {
	c.mu.Lock()
	all := make([]*trackedConn, 0, len(c.open))
	for t := range c.open {
		all = append(all, t)
	}
	c.mu.Unlock()
	for _, t := range all {
		if tc, ok := t.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = t.Close()
	}
	return len(all)
}
