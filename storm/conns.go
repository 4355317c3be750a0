package storm

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/toxics"
)

// conns dials and remembers every open client connection, so that a storm
// can cut them all at once: it resets them itself, or, when they go through
// proxy, has the proxy reset both sides first.
type conns struct {
	d     net.Dialer
	proxy *toxics.Proxy
	mu    sync.Mutex
	open  map[*trackedConn]struct{}
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

// cut resets every open connection and returns how many it cut. Without
// a proxy, linger 0 makes Close send a TCP RST, as a crashed client or a
// dropped NAT entry would look to the server. With one, the proxy resets
// both sides first, and the client's side is closed after.
func (c *conns) cut() int {
	c.mu.Lock()
	all := make([]*trackedConn, 0, len(c.open))
	for t := range c.open {
		all = append(all, t)
	}
	c.mu.Unlock()
	if c.proxy != nil && len(all) > 0 {
		_ = c.proxy.Reset() // fails only once the proxy is closed
	}
	for _, t := range all {
		if tc, ok := t.Conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = t.Close()
	}
	return len(all)
}

// proxyFor puts a fault proxy, whose closes are resets, in front of the
// server at rawURL, and returns it with the URL that goes through it.
func proxyFor(fs *toxics.Server, rawURL string) (*toxics.Proxy, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("--url: %w", err)
	}
	if u.Scheme != "http" {
		// The proxy's address replaces the host, which TLS would refuse.
		return nil, "", fmt.Errorf("--cut proxy needs an http:// URL, got %s", u.Scheme+"://")
	}
	// Through the proxy, an unreachable server would look like a reset.
	upstream := toxics.UpstreamOf(u)
	nc, err := net.DialTimeout("tcp", upstream, 10*time.Second)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach %s: %w", rawURL, err)
	}
	nc.Close()
	p, err := fs.NewProxy("storm", upstream, toxics.WithReset())
	if err != nil {
		return nil, "", fmt.Errorf("fault proxy: %w", err)
	}
	u.Host = p.Addr()
	return p, u.String(), nil
}
