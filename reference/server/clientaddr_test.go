package server

import (
	"net/http"
	"net/netip"
	"testing"
)

// TestForwardedClient: a trusted proxy's forwarded chain is read from the
// right up to the first untrusted address; an untrusted peer's headers,
// the header not chosen, and whatever a client wrote left of that address
// are never read; an entry a trusted proxy wrote that is no address leaves
// that proxy as the client.
func TestForwardedClient(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	xff, fwd := HeaderXForwardedFor, HeaderForwarded
	for _, tc := range []struct {
		name, remote, header string
		values               []string // of the header named by header
		other                []string // of the other one
		want                 string
	}{
		{"no proxy", "198.51.100.7:4000", xff, nil, nil, "198.51.100.7"},
		{"untrusted peer forges X-Forwarded-For", "198.51.100.7:4000", xff, []string{"203.0.113.1"}, nil, "198.51.100.7"},
		{"untrusted peer forges Forwarded", "198.51.100.7:4000", fwd, []string{"for=203.0.113.1"}, nil, "198.51.100.7"},
		{"untrusted peer forges a trusted address", "198.51.100.7:4000", xff, []string{"10.0.0.1"}, nil, "198.51.100.7"},
		{"trusted proxy without the header", "10.0.0.2:4000", xff, nil, nil, "10.0.0.2"},
		{"trusted proxy", "10.0.0.2:4000", xff, []string{"198.51.100.7"}, nil, "198.51.100.7"},
		{"client forges entries left of its own", "10.0.0.2:4000", xff, []string{"203.0.113.1, 10.0.0.9, 198.51.100.7"}, nil, "198.51.100.7"},
		{"client forges garbage", "10.0.0.2:4000", xff, []string{"not an address, 198.51.100.7"}, nil, "198.51.100.7"},
		{"chain of trusted proxies", "10.0.0.3:4000", xff, []string{"198.51.100.7, 10.0.0.1, 10.0.0.2"}, nil, "198.51.100.7"},
		{"chain over header lines", "10.0.0.3:4000", xff, []string{"203.0.113.1, 198.51.100.7", "10.0.0.1"}, nil, "198.51.100.7"},
		{"untrusted hop in the chain", "10.0.0.3:4000", xff, []string{"198.51.100.7, 203.0.113.5, 10.0.0.1"}, nil, "203.0.113.5"},
		{"only trusted addresses", "10.0.0.3:4000", xff, []string{"10.0.0.1, 10.0.0.2"}, nil, "10.0.0.1"},
		{"trusted proxy wrote garbage", "10.0.0.3:4000", xff, []string{"198.51.100.7, bogus"}, nil, "10.0.0.3"},
		{"garbage after a trusted hop", "10.0.0.3:4000", xff, []string{"198.51.100.7, bogus, 10.0.0.1"}, nil, "10.0.0.1"},
		{"empty entry", "10.0.0.3:4000", xff, []string{"198.51.100.7,,"}, nil, "10.0.0.3"},
		{"empty header", "10.0.0.3:4000", xff, []string{""}, nil, "10.0.0.3"},
		{"entry with a port", "10.0.0.3:4000", xff, []string{"198.51.100.7:5555"}, nil, "198.51.100.7"},
		{"IPv6 entries", "[2001:db8:ffff::1]:4000", xff, []string{"2001:db8::7, [2001:db8:ffff::2]:80"}, nil, "2001:db8::7"},
		{"IPv4-mapped peer and entry", "[::ffff:10.0.0.2]:4000", xff, []string{"::ffff:198.51.100.7"}, nil, "198.51.100.7"},
		{"IPv6 zone dropped", "10.0.0.2:4000", xff, []string{"fe80::1%eth0"}, nil, "fe80::1"},
		{"Forwarded", "10.0.0.2:4000", fwd, []string{"for=198.51.100.7;proto=https;by=10.0.0.2"}, nil, "198.51.100.7"},
		{"Forwarded, case and quotes", "10.0.0.2:4000", fwd, []string{`For="[2001:db8:cafe::17]:4711"`}, nil, "2001:db8:cafe::17"},
		{"Forwarded chain", "10.0.0.3:4000", fwd, []string{"for=203.0.113.1, for=198.51.100.7", "for=10.0.0.1;proto=http"}, nil, "198.51.100.7"},
		{"Forwarded quoted comma", "10.0.0.2:4000", fwd, []string{`for=203.0.113.1;host="a,for=10.0.0.9", for=198.51.100.7`}, nil, "198.51.100.7"},
		{"Forwarded unknown", "10.0.0.2:4000", fwd, []string{"for=198.51.100.7, for=unknown"}, nil, "10.0.0.2"},
		{"Forwarded obfuscated", "10.0.0.2:4000", fwd, []string{`for="_gazonk"`}, nil, "10.0.0.2"},
		{"Forwarded element without for", "10.0.0.2:4000", fwd, []string{"for=198.51.100.7, proto=https"}, nil, "10.0.0.2"},
		{"Forwarded unterminated quote", "10.0.0.2:4000", fwd, []string{`for="198.51.100.7`}, nil, "10.0.0.2"},
		{"X-Forwarded-For ignored when Forwarded is chosen", "10.0.0.2:4000", fwd, nil, []string{"198.51.100.7"}, "10.0.0.2"},
		{"Forwarded ignored when X-Forwarded-For is chosen", "10.0.0.2:4000", xff, []string{"198.51.100.7"}, []string{"for=203.0.113.1"}, "198.51.100.7"},
		{"peer that is no address", "@", xff, []string{"198.51.100.7"}, nil, "@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			other := xff
			if tc.header == xff {
				other = fwd
			}
			for _, v := range tc.values {
				h.Add(tc.header, v)
			}
			for _, v := range tc.other {
				h.Add(other, v)
			}
			if got := forwardedClient(tc.remote, h, trusted, tc.header); got != tc.want {
				t.Fatalf("peer %s, %s %q, %s %q: client %q, want %q", tc.remote, tc.header, tc.values, other, tc.other, got, tc.want)
			}
		})
	}
}

// TestForwardedClientNoTrust: with no trusted proxy, as by default, every
// request counts against its peer whatever it says.
func TestForwardedClientNoTrust(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderXForwardedFor, "198.51.100.7")
	h.Set(HeaderForwarded, "for=198.51.100.8")
	for _, header := range []string{HeaderXForwardedFor, HeaderForwarded} {
		if got := forwardedClient("127.0.0.1:5000", h, nil, header); got != "127.0.0.1" {
			t.Fatalf("%s: client %q, want the peer 127.0.0.1", header, got)
		}
	}
}
