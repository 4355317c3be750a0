package client_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestRedirectToAnotherPortNotFollowed: a 307 from the endpoint to another
// port of the host is not followed, whether the caller gives no
// http.Client or one without a redirect policy: the other origin sees no
// request, and the error says why.
func TestRedirectToAnotherPortNotFollowed(t *testing.T) {
	e := newEnv(t, server.Config{})
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, e.url+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer from.Close()
	for name, hc := range map[string]*http.Client{"default client": nil, "caller's client": {}} {
		c, err := client.New(client.Options{URL: from.URL + "/mcp", BearerToken: "tok", HTTPClient: hc, Logger: testLogger()})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Connect(ctx(t))
		c.Close()
		if err == nil || !strings.Contains(err.Error(), "not followed") {
			t.Errorf("%s: Connect: %v, want the redirect not followed", name, err)
		}
	}
	if got := e.reqs.all(); len(got) != 0 {
		t.Errorf("the other port received %d requests", len(got))
	}
}

// TestBearerTokenBoundToOrigin: the stored token is stored with its
// origin and is not used for another one (WithheldToken names its origin);
// a path of the same origin still gets it.
func TestBearerTokenBoundToOrigin(t *testing.T) {
	st := storage.NewMemory()
	newClient := func(url, tok string) *client.Client {
		t.Helper()
		c, err := client.New(client.Options{URL: url, Storage: st, BearerToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		return c
	}
	newClient("http://a.example:1/mcp", "tok")
	if got, _ := st.Get(client.KeyBearerOrigin); got != "http://a.example:1" {
		t.Fatalf("stored origin %q", got)
	}
	for _, tc := range []struct{ url, withheld string }{
		{"http://a.example:2/mcp", "http://a.example:1"},
		{"https://a.example:1/mcp", "http://a.example:1"},
		{"http://b.example:1/mcp", "http://a.example:1"},
		{"http://A.example:1/other", ""},
	} {
		if got := newClient(tc.url, "").WithheldToken(); got != tc.withheld {
			t.Errorf("%s: withheld %q, want %q", tc.url, got, tc.withheld)
		}
	}
	if got, _ := st.Get(client.KeyBearerToken); got != "tok" {
		t.Errorf("stored token %q, want it kept for its origin", got)
	}
	newClient("http://b.example:1/mcp", "tok-b")
	if got, _ := st.Get(client.KeyBearerOrigin); got != "http://b.example:1" {
		t.Errorf("stored origin %q after a token for b", got)
	}
}
