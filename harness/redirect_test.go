package harness

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/target"
)

// withToken is a profile whose requests carry a bearer token.
func withToken() *target.Profile {
	return &target.Profile{Principals: []target.Principal{{Name: "a", Token: "secret-a"}, {Name: "b", Token: "secret-b"}}}
}

// TestRedirectOffOriginIsASetupError: a target that redirects initialize to
// another host or port is a setup error naming the Location, with or
// without --follow-redirects, and the other origin never sees the token.
func TestRedirectOffOriginIsASetupError(t *testing.T) {
	other := &stubMCP{version: "2025-11-25"}
	elsewhere := httptest.NewServer(other)
	defer elsewhere.Close()
	src := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/mcp", http.StatusTemporaryRedirect))
	defer src.Close()
	for _, follow := range []bool{false, true} {
		_, err := preflight(context.Background(), src.URL+"/mcp", "2025-11-25", withToken(), follow)
		if err == nil {
			t.Fatalf("follow=%v: preflight accepted a redirect to %s", follow, elsewhere.URL)
		}
		if msg := err.Error(); !strings.Contains(msg, elsewhere.URL+"/mcp") || !strings.Contains(msg, "another origin") {
			t.Errorf("follow=%v: the error does not name the Location and the other origin: %v", follow, msg)
		}
	}
	if got := other.seen(); len(got) != 0 {
		t.Errorf("the other origin got %d requests (Authorization %q); want none", len(got), got)
	}
}

// TestRunRefusesRedirect: the run stops with a setup error (exit 2) at a
// redirect, and never grades the endpoint it points to.
func TestRunRefusesRedirect(t *testing.T) {
	other := &stubMCP{version: "2025-11-25"}
	elsewhere := httptest.NewServer(other)
	defer elsewhere.Close()
	src := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/mcp", http.StatusTemporaryRedirect))
	defer src.Close()
	_, err := Run(context.Background(), Options{URL: src.URL + "/mcp", NoProxy: true, Focus: "^SESS-ID-CHARS$"}, io.Discard, io.Discard)
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), elsewhere.URL+"/mcp") {
		t.Fatalf("Run = %v; want a setup error naming %s", err, elsewhere.URL+"/mcp")
	}
	if got := other.seen(); len(got) != 0 {
		t.Errorf("the other origin got %d requests; want none", len(got))
	}
}

// TestSameOriginRedirect: a redirect within the origin is a setup error
// that suggests --follow-redirects, and with it is followed, credentials
// and all, and the endpoint it led to is the one checked.
func TestSameOriginRedirect(t *testing.T) {
	moved := &stubMCP{version: "2025-11-25"}
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.RedirectHandler("/v2/mcp", http.StatusTemporaryRedirect))
	mux.Handle("/v2/mcp", moved)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	_, err := preflight(context.Background(), srv.URL+"/mcp", "2025-11-25", withToken(), false)
	if err == nil || !strings.Contains(err.Error(), "--follow-redirects") || !strings.Contains(err.Error(), srv.URL+"/v2/mcp") {
		t.Fatalf("without --follow-redirects: %v; want a setup error naming %s and --follow-redirects", err, srv.URL+"/v2/mcp")
	}
	if got := moved.seen(); len(got) != 0 {
		t.Fatalf("the redirect was followed without --follow-redirects (%d requests)", len(got))
	}

	p, err := preflight(context.Background(), srv.URL+"/mcp", "2025-11-25", withToken(), true)
	if err != nil {
		t.Fatalf("with --follow-redirects: %v", err)
	}
	if p.url != srv.URL+"/v2/mcp" {
		t.Errorf("probe.url = %q, want %q", p.url, srv.URL+"/v2/mcp")
	}
	if got := moved.seen(); len(got) == 0 || got[0] != "Bearer secret-a" {
		t.Errorf("the moved endpoint got Authorization %q; want the token on the followed redirect", got)
	}
}
