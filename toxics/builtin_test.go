package toxics

import (
	"errors"
	"testing"
	"time"
)

func TestBuiltins(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	s := newServer(t)
	body := make([]byte, 64<<10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	for name, add := range map[string]func(*Proxy) error{
		"latency":   func(p *Proxy) error { return p.Latency(50*time.Millisecond, 10*time.Millisecond) },
		"slicer":    func(p *Proxy) error { return p.Slicer(100, 50, 10*time.Microsecond) },
		"bandwidth": func(p *Proxy) error { return p.Bandwidth(1024) },
		"all": func(p *Proxy) error {
			return errors.Join(p.Latency(20*time.Millisecond, 0), p.Slicer(500, 100, 0), p.Bandwidth(2048), p.Latency(5*time.Millisecond, 0))
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProxy(t, s, u)
			c, st := openStream(t, p.Addr(), u)
			if err := add(p); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got := httpPost(t, "http://"+p.Addr()+"/echo", body)
			if string(got) != string(body) {
				t.Fatalf("echo: %d bytes back, not the %d sent", len(got), len(body))
			}
			if name == "latency" && time.Since(start) < 40*time.Millisecond {
				t.Fatalf("a request took %v under 50±10ms latency", time.Since(start))
			}
			st.mustWrite(t, "data: live\n\n")
			c.mustEvent(t, "live")
			p.Close()
		})
	}
}

func TestBuiltinErrors(t *testing.T) {
	checkLeaks(t)
	p := newProxy(t, newServer(t), newUpstream(t))
	for name, err := range map[string]error{
		"negative latency": p.Latency(-time.Millisecond, 0),
		"tiny latency":     p.Latency(time.Microsecond, 0),
		"negative jitter":  p.Latency(time.Millisecond, -1),
		"zero slice":       p.Slicer(0, 0, 0),
		"wide variation":   p.Slicer(10, 10, 0),
		"negative delay":   p.Slicer(10, 1, -1),
		"zero bandwidth":   p.Bandwidth(0),
		"negative timeout": p.Timeout(-time.Second),
	} {
		if err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestTimeout(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	s := newServer(t)

	p := newProxy(t, s, u)
	c, st := openStream(t, p.Addr(), u)
	if err := p.Timeout(0); err != nil {
		t.Fatal(err)
	}
	st.mustWrite(t, "data: dropped\n\n")
	c.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.br.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("stream under Timeout(0): read %d bytes, err %v; want nothing", n, err)
	}
	fresh := dial(t, p.Addr())
	fresh.conn.Write([]byte("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"))
	fresh.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := fresh.br.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("new connection under Timeout(0): read %d bytes, err %v; want nothing", n, err)
	}

	q := newProxy(t, s, u)
	c2, _ := openStream(t, q.Addr(), u)
	if err := q.Timeout(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.event(wait); err == nil || isTimeout(err) {
		t.Fatalf("stream under Timeout(100ms): err = %v, want it closed", err)
	}
}

// TestCloseWhileFlooded closes proxies with built-in toxics while data is
// stuck on its way to a client that does not read: nothing may be left
// blocked.
func TestCloseWhileFlooded(t *testing.T) {
	checkLeaks(t)
	u := newUpstream(t)
	s := newServer(t)
	slicer := func(p *Proxy) error { return p.Slicer(4000, 10, 0) }
	for name, faults := range map[string][2]func(*Proxy) error{
		"none":    {},
		"latency": {func(p *Proxy) error { return p.Latency(time.Millisecond, 0) }},
		"slicer":  {slicer},
		"frozen":  {slicer, (*Proxy).Freeze},
		"timeout": {slicer, func(p *Proxy) error { return p.Timeout(0) }},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProxy(t, s, u)
			if f := faults[0]; f != nil {
				if err := f(p); err != nil {
					t.Fatal(err)
				}
			}
			c := dial(t, p.Addr())
			c.get(t, "/flood")
			// Wait until the flood stalls, that is until the client's and
			// the proxy's buffers are full.
			deadline := time.After(wait)
		flood:
			for {
				select {
				case <-u.flooded:
				case <-time.After(200 * time.Millisecond):
					break flood
				case <-deadline:
					t.Fatal("the flood never stalled")
				}
			}
			if f := faults[1]; f != nil {
				if err := f(p); err != nil {
					t.Fatal(err)
				}
			}
			p.Close()
		})
	}
}
