package cmdline

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/reference/server"
)

// bearerTokens is the repeatable NAME=TOKEN flag.
type bearerTokens struct {
	byToken map[string]string
}

func (b *bearerTokens) String() string {
	if b == nil {
		return ""
	}
	names := make([]string, 0, len(b.byToken))
	for _, n := range b.byToken {
		names = append(names, n+"=***")
	}
	return strings.Join(names, ",")
}

func (b *bearerTokens) Set(v string) error {
	name, token, ok := strings.Cut(v, "=")
	if !ok || name == "" || token == "" {
		return fmt.Errorf("want NAME=TOKEN, got %q", v)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return fmt.Errorf("token for %q contains whitespace", name)
	}
	if b.byToken == nil {
		b.byToken = map[string]string{}
	}
	if other, dup := b.byToken[token]; dup && other != name {
		return fmt.Errorf("token for %q is already used by %q", name, other)
	}
	b.byToken[token] = name
	return nil
}

// originList is the repeatable --allowed-origin flag: each value must be an
// origin, scheme://host[:port], as browsers send it.
type originList []string

func (l *originList) String() string { return strings.Join(*l, ",") }

func (l *originList) Set(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("want an origin such as https://app.example or http://localhost:3000, got %q", v)
	}
	*l = append(*l, v)
	return nil
}

// prefixList is the repeatable --trusted-proxy flag: a CIDR, or one address.
type prefixList []netip.Prefix

func (l *prefixList) String() string {
	var out []string
	for _, p := range *l {
		out = append(out, p.String())
	}
	return strings.Join(out, ",")
}

func (l *prefixList) Set(v string) error {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		a, aerr := netip.ParseAddr(v)
		if aerr != nil || a.Zone() != "" {
			return fmt.Errorf("want a CIDR such as 10.0.0.0/8 or an address such as 192.0.2.7, got %q", v)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	a := p.Addr()
	if a.Is4In6() { // as peers are compared: ::ffff:10.0.0.1 is 10.0.0.1
		if p.Bits() < 96 {
			return fmt.Errorf("%q mixes IPv4-mapped and IPv6 addresses: give the IPv4 CIDR", v)
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	*l = append(*l, p.Masked())
	return nil
}

// forwardedHeader is the --forwarded-header flag.
type forwardedHeader string

func (h *forwardedHeader) String() string { return strings.ToLower(string(*h)) }

func (h *forwardedHeader) Set(v string) error {
	switch strings.ToLower(v) {
	case "x-forwarded-for":
		*h = server.HeaderXForwardedFor
	case "forwarded":
		*h = server.HeaderForwarded
	default:
		return fmt.Errorf("want x-forwarded-for or forwarded, got %q", v)
	}
	return nil
}

// revisionList is the --revisions flag: protocol revisions, comma-separated
// or repeated; none given means every revision the server knows.
type revisionList []string

func (l *revisionList) String() string { return strings.Join(*l, ",") }

func (l *revisionList) Set(v string) error {
	for _, r := range strings.Split(v, ",") {
		r = strings.TrimSpace(r)
		if !slices.Contains(server.KnownRevisions(), r) {
			return fmt.Errorf("unknown protocol revision %q: want a comma-separated list of %s", r, strings.Join(server.KnownRevisions(), ", "))
		}
		if !slices.Contains(*l, r) {
			*l = append(*l, r)
		}
	}
	return nil
}
