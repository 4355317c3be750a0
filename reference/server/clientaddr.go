package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// The headers a trusted proxy may name the client in (Config.ForwardedHeader).
const (
	HeaderXForwardedFor = "X-Forwarded-For"
	HeaderForwarded     = "Forwarded" // RFC 7239, its for= parameter
)

// clientAddr is the address the anonymous session rate counts a request
// against: its peer's, or, when the peer is a trusted proxy, the client
// address the proxies forwarded.
func (s *Server) clientAddr(r *http.Request) string {
	return forwardedClient(r.RemoteAddr, r.Header, s.cfg.TrustedProxies, s.cfg.ForwardedHeader)
}

// forwardedClient resolves the client of a request from peer remote. The
// forwarded chain (the header's addresses, oldest first, then the peer) is
// read from the right: every trusted proxy appends the address it was
// connected from, so the first untrusted address is the client, and what
// lies left of it, which the client wrote itself, is never read. An
// untrusted peer's header is not read at all. When the entry a trusted
// proxy wrote cannot be read (malformed, "unknown", an obfuscated name),
// that proxy is the client, as it would be without the header; when every
// address is trusted, the first one is.
func forwardedClient(remote string, h http.Header, trusted []netip.Prefix, header string) string {
	peer, ok := parseHost(remote)
	if !ok {
		return remote
	}
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	var chain []string
	if header == HeaderForwarded {
		chain = forwardedFor(h.Values(HeaderForwarded))
	} else {
		for _, v := range h.Values(HeaderXForwardedFor) {
			for _, e := range strings.Split(v, ",") {
				chain = append(chain, strings.TrimSpace(e))
			}
		}
	}
	client := peer // the proxy that wrote the entry being read
	for i := len(chain) - 1; i >= 0; i-- {
		a, ok := parseHost(chain[i])
		if !ok {
			return client.String()
		}
		if !isTrusted(a, trusted) {
			return a.String()
		}
		client = a
	}
	return client.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost reads an address as a forwarded entry or a peer gives it: an
// IP, with or without a port, IPv6 in brackets when it has one (or in
// Forwarded always). IPv4-mapped IPv6 counts as the IPv4 address, and a
// zone is dropped, so that one client cannot hold several buckets.
func parseHost(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// forwardedFor returns the for= node of each element of Forwarded header
// values, oldest first; "" for an element without one, which no address
// parses from.
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		for _, elem := range splitQuoted(v, ',') {
			node := ""
			for _, pair := range splitQuoted(elem, ';') {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
					node = unquote(strings.TrimSpace(val))
					break
				}
			}
			out = append(out, node)
		}
	}
	return out
}

// splitQuoted splits s at sep outside double-quoted strings.
func splitQuoted(s string, sep byte) []string {
	var parts []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case quoted && c == '\\':
			escaped = true
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unquote undoes an RFC 7230 quoted-string; anything else is returned as is.
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		if s[i] == '\\' && i+1 < len(s)-1 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
