package cmdline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestTrustedProxyFlag: a CIDR or one address, masked; IPv4-mapped ones
// as IPv4; anything else is refused, naming what is wanted.
func TestTrustedProxyFlag(t *testing.T) {
	var l prefixList
	for _, v := range []string{"10.1.2.3/8", "192.0.2.7", "::ffff:172.16.0.0/108", "2001:db8::/32", "2001:db8::1"} {
		if err := l.Set(v); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	if got, want := l.String(), "10.0.0.0/8,192.0.2.7/32,172.16.0.0/12,2001:db8::/32,2001:db8::1/128"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	for v, want := range map[string]string{
		"proxy.example": "want a CIDR", "10.0.0.0/33": "want a CIDR", "fe80::1%eth0": "want a CIDR",
		"::ffff:0:0/90": "mixes IPv4-mapped", "": "want a CIDR",
	} {
		if err := l.Set(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", v, err, want)
		}
	}
}

// TestTrustedProxyServed: the flags reach the server. 100 anonymous
// sessions at once, each with its own Forwarded client, are all admitted
// when the loopback peer is a trusted proxy and its header is Forwarded;
// without --trusted-proxy, or with the other header chosen, the default
// burst of 60 holds them to one address.
func TestTrustedProxyServed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		all  bool
	}{
		{[]string{"--trusted-proxy", "127.0.0.0/8", "--forwarded-header", "forwarded"}, true},
		{[]string{"--forwarded-header", "forwarded"}, false},
		{[]string{"--trusted-proxy", "127.0.0.1"}, false}, // X-Forwarded-For is read, Forwarded not
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, "reference-server", append([]string{"--addr", "127.0.0.1:0", "--log-level", "error"}, tc.args...), pw, io.Discard)
				pw.Close()
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil {
				t.Fatalf("reading stdout: %v", err)
			}
			go io.Copy(io.Discard, pr)
			c := wire.New(strings.TrimPrefix(strings.TrimSpace(line), "listening on "))
			limited := 0
			for i := range 100 {
				c.Header.Set("Forwarded", fmt.Sprintf("for=198.51.100.%d", i+1))
				resp, err := c.Initialize(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status == http.StatusTooManyRequests {
					limited++
				} else if resp.Status != http.StatusOK {
					t.Fatalf("session %d: HTTP %d", i, resp.Status)
				}
			}
			if tc.all && limited > 0 || !tc.all && limited == 0 {
				t.Fatalf("%d of 100 sessions answered 429; want %s", limited, map[bool]string{true: "none", false: "some"}[tc.all])
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
		})
	}
}

// TestForwardedHeaderFlag: only the two headers are accepted.
func TestForwardedHeaderFlag(t *testing.T) {
	err := Run(context.Background(), "reference-server", []string{"--forwarded-header", "x-real-ip"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "want x-forwarded-for or forwarded") {
		t.Fatalf("got %v", err)
	}
}
