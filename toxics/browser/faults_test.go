package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// probePage serves a page that reports, through the binding __line, what it
// finds in localStorage, what the script before it set, and whether a
// fetch of /ping works; each load counts itself in localStorage.
func probePage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			fmt.Fprint(w, "pong")
			return
		}
		fmt.Fprint(w, `<!doctype html><script>
const n = Number(localStorage.getItem("n") || 0) + 1;
localStorage.setItem("n", String(n));
globalThis.probe = async () => {
  let fetched;
  try { fetched = await (await fetch("/ping")).text(); } catch (e) { fetched = "failed"; }
  __line(JSON.stringify({n, given: globalThis.given || null, online: navigator.onLine, fetched}));
};
probe();
</script>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// lines collects a tab's binding calls.
type lines chan string

func (l lines) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no binding call in 20 s")
		return ""
	}
}

func openTab(t *testing.T, p *Profile) (*Tab, lines) {
	t.Helper()
	got := make(lines, 16)
	tab, err := p.Open([]string{"__line"}, Events{Binding: func(_, payload string) { got <- payload }})
	if err != nil {
		t.Fatal(err)
	}
	return tab, got
}

// TestFaults proves each fault of a page on a real Chromium: a reload
// runs the new script in a new document that keeps the storage; offline
// fails the page's requests and flips navigator.onLine, online restores
// both; a cleared storage starts the count again; a second tab of the
// profile shares its storage, and a closed tab's profile keeps it.
func TestFaults(t *testing.T) {
	b := launch(t)
	srv := probePage(t)
	p, err := b.Profile()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tab, got := openTab(t, p)
	if err := tab.Load(srv.URL, `globalThis.given = "first"`); err != nil {
		t.Fatal(err)
	}
	want := func(l lines, s string) {
		t.Helper()
		if g := l.next(t); g != s {
			t.Fatalf("got %s, want %s", g, s)
		}
	}
	want(got, `{"n":1,"given":"first","online":true,"fetched":"pong"}`)

	if err := tab.Reload(`globalThis.given = "second"`); err != nil {
		t.Fatal(err)
	}
	want(got, `{"n":2,"given":"second","online":true,"fetched":"pong"}`)

	if err := tab.Offline(true); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Eval("probe()"); err != nil {
		t.Fatal(err)
	}
	want(got, `{"n":2,"given":"second","online":false,"fetched":"failed"}`)
	if err := tab.Offline(false); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Eval("probe()"); err != nil {
		t.Fatal(err)
	}
	want(got, `{"n":2,"given":"second","online":true,"fetched":"pong"}`)

	second, got2 := openTab(t, p)
	if err := second.Load(srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	want(got2, `{"n":3,"given":null,"online":true,"fetched":"pong"}`)
	second.Close()

	if err := p.ClearStorage(strings.TrimSuffix(srv.URL, "/")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Load(srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	want(got, `{"n":1,"given":null,"online":true,"fetched":"pong"}`)
}
