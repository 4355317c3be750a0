package wire

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// recorder is an endpoint that records the Authorization of every request
// it gets and answers 200.
type recorder struct {
	mu    sync.Mutex
	auths []string
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.auths = append(rc.auths, r.Header.Get("Authorization"))
	rc.mu.Unlock()
	w.Header().Set("Content-Type", MediaTypeJSON)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
}

func (rc *recorder) seen() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.auths...)
}

// redirector answers every request with a 307 to loc (relative to its own
// URL when loc starts with "/").
func redirector(loc func(self string) string) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			(&recorder{}).ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, loc(srv.URL), http.StatusTemporaryRedirect)
	}))
	return srv
}

// TestRedirectToAnotherOriginIsNotFollowed: a redirect to another host or
// port comes back as the 3xx it is, followed or not, and the other origin
// never sees a request, let alone the bearer token.
func TestRedirectToAnotherOriginIsNotFollowed(t *testing.T) {
	other := &recorder{}
	elsewhere := httptest.NewServer(other)
	defer elsewhere.Close()
	src := redirector(func(string) string { return elsewhere.URL + "/mcp" })
	defer src.Close()
	for _, follow := range []bool{false, true} {
		c := New(src.URL + "/mcp")
		c.Header.Set("Authorization", "Bearer secret")
		c.FollowRedirects = follow
		resp, err := c.Post(context.Background(), "", c.Request("ping", nil))
		if err != nil {
			t.Fatalf("follow=%v: %v", follow, err)
		}
		if resp.Status != http.StatusTemporaryRedirect || resp.Header.Get("Location") != elsewhere.URL+"/mcp" {
			t.Errorf("follow=%v: got HTTP %d Location %q, want the 307 itself", follow, resp.Status, resp.Header.Get("Location"))
		}
	}
	if got := other.seen(); len(got) != 0 {
		t.Errorf("the other origin got %d requests (Authorization %q); want none", len(got), got)
	}
}

// TestSameOriginRedirectFollowedOnlyWhenAsked: a redirect within the
// origin is returned by default and followed, with the credentials, when
// FollowRedirects is set.
func TestSameOriginRedirectFollowedOnlyWhenAsked(t *testing.T) {
	src := redirector(func(self string) string { return "/moved" })
	defer src.Close()

	c := New(src.URL + "/mcp")
	c.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Post(context.Background(), "", c.Request("ping", nil))
	if err != nil || resp.Status != http.StatusTemporaryRedirect {
		t.Fatalf("by default: got %v, %v; want the 307 itself", resp, err)
	}

	c.FollowRedirects = true
	resp, err = c.Post(context.Background(), "", c.Request("ping", nil))
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("following: got %+v, %v; want the moved endpoint's 200", resp, err)
	}
	if resp.URL != src.URL+"/moved" {
		t.Errorf("Response.URL = %q, want %q", resp.URL, src.URL+"/moved")
	}
}

// TestSameOrigin: scheme, host and port decide, the default port included.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h:80/a", "http://h/b", true},
		{"https://H/a", "https://h:443/b", true},
		{"http://h/a", "https://h/a", false},
		{"http://h:1/a", "http://h:2/a", false},
		{"http://h/a", "http://g/a", false},
	} {
		if got := SameOrigin(mustURL(t, tc.a), mustURL(t, tc.b)); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
