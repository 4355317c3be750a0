package toxics

import (
	"io"
	"net"
	"testing"
	"time"
)

// tcpUpstream is a bare TCP server; each accepted connection is handed to
// the test.
type tcpUpstream struct {
	ln    net.Listener
	conns chan net.Conn
}

// newEchoUpstream starts a tcpUpstream closed at cleanup.
func newEchoUpstream(t *testing.T) *tcpUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &tcpUpstream{ln: ln, conns: make(chan net.Conn, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for {
			select {
			case c := <-u.conns:
				c.Close()
			default:
				return
			}
		}
	})
	return u
}

func (u *tcpUpstream) addr() string { return u.ln.Addr().String() }

// connect dials addr and returns the client's and the server's end, both
// closed at cleanup.
func (u *tcpUpstream) connect(t *testing.T, addr string) (client, server net.Conn) {
	t.Helper()
	client, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	select {
	case server = <-u.conns:
	case <-time.After(wait):
		t.Fatal("the upstream accepted no connection")
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}

// exchange checks that data flows both ways between a and b.
func exchange(t *testing.T, a, b net.Conn) {
	t.Helper()
	for _, pair := range [][2]net.Conn{{a, b}, {b, a}} {
		from, to := pair[0], pair[1]
		from.SetDeadline(time.Now().Add(wait))
		to.SetDeadline(time.Now().Add(wait))
		if _, err := from.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(to, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("exchange: read %q, %v", buf, err)
		}
	}
}
