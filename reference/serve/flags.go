package serve

import (
	"fmt"
	"net/url"
	"strings"
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
