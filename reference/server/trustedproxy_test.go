package server_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestTrustedProxyRate: with the default anonymous rate (1/s, bursts of
// 60, the clock standing still), 500 new sessions from one address are 60
// admitted and 440 answered 429. Through a trusted proxy whose forwarded
// clients all differ, none is throttled, and one forwarded client alone is
// still held to the burst; from an untrusted address the same forged
// headers change nothing.
func TestTrustedProxyRate(t *testing.T) {
	loopback := netip.MustParsePrefix("127.0.0.1/32")
	elsewhere := netip.MustParsePrefix("10.0.0.0/8")
	for _, tc := range []struct {
		name        string
		trusted     netip.Prefix
		header      string
		value       func(i int) string
		ok, limited int
	}{
		{"trusted X-Forwarded-For", loopback, server.HeaderXForwardedFor, func(i int) string { return "203.0.113.9, " + client(i) }, 500, 0},
		{"trusted Forwarded", loopback, server.HeaderForwarded, func(i int) string { return "for=" + client(i) + ";proto=https" }, 500, 0},
		{"one client through the proxy", loopback, server.HeaderXForwardedFor, func(int) string { return client(7) }, 60, 440},
		{"untrusted X-Forwarded-For", elsewhere, server.HeaderXForwardedFor, func(i int) string { return client(i) }, 60, 440},
		{"untrusted Forwarded", elsewhere, server.HeaderForwarded, func(i int) string { return "for=" + client(i) }, 60, 440},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, server.Config{TrustedProxies: []netip.Prefix{tc.trusted}, ForwardedHeader: tc.header})
			c := e.client()
			ok, limited := 0, 0
			for i := range 500 {
				c.Header.Set(tc.header, tc.value(i))
				resp, err := c.Initialize(e.ctx(), "")
				if err != nil {
					t.Fatalf("session %d: %v", i, err)
				}
				switch resp.Status {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests:
					limited++
				default:
					t.Fatalf("session %d: HTTP %d %s", i, resp.Status, resp.Body)
				}
			}
			if ok != tc.ok || limited != tc.limited {
				t.Fatalf("%d sessions admitted, %d answered 429; want %d and %d", ok, limited, tc.ok, tc.limited)
			}
		})
	}
}

// client is the i-th of 500 distinct documentation addresses.
func client(i int) string { return fmt.Sprintf("198.51.%d.%d", 100+i/250, i%250+1) }
