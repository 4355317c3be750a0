package toxics

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

func TestForwarding(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	checkHello(t, p)
	body := make([]byte, 1<<20)
	rand.Read(body)
	if got := httpPost(t, "http://"+p.Addr()+"/echo", body); !bytes.Equal(got, body) {
		t.Fatalf("echo through the proxy: got %d bytes, want the %d sent", len(got), len(body))
	}
	c, s := openStream(t, p.Addr(), u)
	s.mustWrite(t, ": keep-alive\n\ndata: one\n\n")
	c.mustEvent(t, "one")
}

func TestNewProxyErrors(t *testing.T) {
	checkLeaks(t)
	s := newServer(t)
	for _, up := range []string{"", "localhost", "127.0.0.1:", ":8080", "127.0.0.1:0", "127.0.0.1:99999", "127.0.0.1:no-such-service"} {
		if p, err := s.NewProxy("bad", up); err == nil {
			p.Close()
			t.Errorf("NewProxy(%q) succeeded", up)
		}
	}
	a, err := s.NewProxy("same", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.NewProxy("same", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() == b.Name() || a.Addr() == b.Addr() {
		t.Fatalf("two proxies share a name or address: %s %s, %s %s", a.Name(), a.Addr(), b.Name(), b.Addr())
	}
}

func TestRefresh(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	c, s := openStream(t, p.Addr(), u)
	s.mustWrite(t, "data: before\n\n")
	c.mustEvent(t, "before")

	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.event(wait); err == nil || isTimeout(err) {
		t.Fatalf("live stream after Refresh: err = %v, want EOF or a closed-connection error", err)
	}
	s.waitGone(t)

	checkHello(t, p)
	c2, s2 := openStream(t, p.Addr(), u)
	s2.mustWrite(t, "data: after\n\n")
	c2.mustEvent(t, "after")
}

func TestFreeze(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	p := newProxy(t, newServer(t), u)
	c, s := openStream(t, p.Addr(), u)
	s.mustWrite(t, "data: before\n\n")
	c.mustEvent(t, "before")

	if err := p.Freeze(); err != nil {
		t.Fatal(err)
	}
	s.mustWrite(t, "data: lost\n\n")
	c.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.br.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("frozen stream: read %d bytes, err %v; want nothing until the deadline", n, err)
	}
	select {
	case <-s.ctxDone:
		t.Fatal("the server saw the frozen connection close")
	default:
	}

	checkHello(t, p)
	c2, s2 := openStream(t, p.Addr(), u)
	s2.mustWrite(t, "data: after\n\n")
	c2.mustEvent(t, "after")
}

// TestFreezeTCP checks both directions on a bare TCP connection.
func TestFreezeTCP(t *testing.T) {
	checkLeaks(t)
	p, up, conn, server := tcpThroughProxy(t)
	if err := p.Freeze(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("to server")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Write([]byte("to client")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{"client": conn, "server": server} {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if n, err := c.Read(make([]byte, 16)); !isTimeout(err) {
			t.Fatalf("%s side of a frozen connection: read %d bytes, err %v; want nothing", name, n, err)
		}
	}
	conn2, server2 := up.connect(t, p.Addr())
	exchange(t, conn2, server2)
}

// TestStallTCP checks that a stalled connection stops taking the server's
// data, so the server's writes block, while the client's data still
// arrives and new connections work.
func TestStallTCP(t *testing.T) {
	checkLeaks(t)
	p, up, conn, server := tcpThroughProxy(t)
	if err := p.Stall(); err != nil {
		t.Fatal(err)
	}
	// The server writes until a write blocks; the kernel's buffers hold a
	// few MB on loopback, far below the limit.
	const limit = 256 << 20
	chunk := make([]byte, 64<<10)
	written := 0
	for {
		server.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := server.Write(chunk)
		written += n
		if isTimeout(err) {
			break
		}
		if err != nil {
			t.Fatalf("server write after %d bytes: %v", written, err)
		}
		if written > limit {
			t.Fatalf("the server wrote %d bytes to a stalled connection without blocking", written)
		}
	}
	// Toxiproxy reads at most 32 KB at a time.
	if got, most := p.Stalled(), int64(stallBudget+32<<10); got < 1 || got > most {
		t.Fatalf("Stalled() = %d, want 1..%d", got, most)
	}
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 16)); !isTimeout(err) {
		t.Fatalf("client side of a stalled connection: read %d bytes, err %v; want nothing", n, err)
	}
	server.SetReadDeadline(time.Now().Add(wait))
	if _, err := conn.Write([]byte("to server")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("to server"))
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "to server" {
		t.Fatalf("the client's data on a stalled connection: read %q, %v", buf, err)
	}
	conn2, server2 := up.connect(t, p.Addr())
	exchange(t, conn2, server2)
}

// TestRefreshTCP checks that both peers of a bare TCP connection see a FIN.
func TestRefreshTCP(t *testing.T) {
	checkLeaks(t)
	p, up, conn, server := tcpThroughProxy(t)
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]net.Conn{"client": conn, "server": server} {
		c.SetReadDeadline(time.Now().Add(wait))
		if _, err := c.Read(make([]byte, 16)); err != io.EOF {
			t.Fatalf("%s side after Refresh: err = %v, want EOF", name, err)
		}
	}
	conn2, server2 := up.connect(t, p.Addr())
	exchange(t, conn2, server2)
}

func TestReset(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	s := newServer(t)
	plain := newProxy(t, s, u)
	if err := plain.Reset(); !errors.Is(err, ErrNoReset) {
		t.Fatalf("Reset without WithReset: err = %v, want ErrNoReset", err)
	}

	p := newProxy(t, s, u, WithReset())
	checkHello(t, p)
	c, st := openStream(t, p.Addr(), u)
	st.mustWrite(t, "data: before\n\n")
	c.mustEvent(t, "before")
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.event(wait); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("live stream after Reset: err = %v, want ECONNRESET", err)
	}
	st.waitGone(t)

	checkHello(t, p)
	c2, st2 := openStream(t, p.Addr(), u)
	st2.mustWrite(t, "data: after\n\n")
	c2.mustEvent(t, "after")
}

// TestResetTCP checks that both peers see the reset, and that on a
// WithReset proxy a Refresh resets as well, as documented.
func TestResetTCP(t *testing.T) {
	checkLeaks(t)
	up := newEchoUpstream(t)
	p, err := newServer(t).NewProxy("tcp", up.addr(), WithReset())
	if err != nil {
		t.Fatal(err)
	}
	for _, fault := range []func() error{p.Reset, p.Refresh} {
		conn, server := up.connect(t, p.Addr())
		exchange(t, conn, server)
		if err := fault(); err != nil {
			t.Fatal(err)
		}
		for name, c := range map[string]net.Conn{"client": conn, "server": server} {
			c.SetReadDeadline(time.Now().Add(wait))
			if _, err := c.Read(make([]byte, 16)); !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("%s side: err = %v, want ECONNRESET", name, err)
			}
		}
	}
	conn, server := up.connect(t, p.Addr())
	exchange(t, conn, server)
}

func TestClose(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	s := NewServer()
	t.Cleanup(func() { s.Close() })
	p := newProxy(t, s, u)
	q := newProxy(t, s, u)
	c, _ := openStream(t, p.Addr(), u)
	frozen, _ := openStream(t, p.Addr(), u)
	if err := p.Freeze(); err != nil {
		t.Fatal(err)
	}

	p.Close()
	p.Close()
	if conn, err := net.DialTimeout("tcp", p.Addr(), wait); err == nil {
		conn.Close()
		t.Fatal("dialing a closed proxy succeeded")
	}
	for _, cl := range []*client{c, frozen} {
		if _, err := cl.event(wait); err == nil || isTimeout(err) {
			t.Fatalf("stream through a closed proxy: err = %v, want it closed", err)
		}
	}
	for name, f := range map[string]func() error{
		"Refresh": p.Refresh, "Freeze": p.Freeze, "Reset": p.Reset,
		"CutAfter": func() error { return p.CutAfter(1) },
		"Latency":  func() error { return p.Latency(time.Millisecond, 0) },
	} {
		if err := f(); !errors.Is(err, ErrClosed) && !errors.Is(err, ErrNoReset) {
			t.Errorf("%s on a closed proxy: err = %v, want ErrClosed", name, err)
		}
	}

	checkHello(t, q)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", q.Addr(), wait); err == nil {
		conn.Close()
		t.Fatal("dialing a proxy of a closed server succeeded")
	}
	if _, err := s.NewProxy("late", u.addr()); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewProxy on a closed server: err = %v, want ErrClosed", err)
	}
}

// tcpThroughProxy starts an echo upstream behind a TCP proxy and returns
// one connection through it, both ends seen to exchange data.
func tcpThroughProxy(t *testing.T) (*Proxy, *tcpUpstream, net.Conn, net.Conn) {
	t.Helper()
	up := newEchoUpstream(t)
	p, err := newServer(t).NewProxy("tcp", up.addr())
	if err != nil {
		t.Fatal(err)
	}
	conn, server := up.connect(t, p.Addr())
	exchange(t, conn, server)
	return p, up, conn, server
}
