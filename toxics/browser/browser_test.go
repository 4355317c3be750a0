package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// launch starts Chromium for a test, or skips it where there is none.
func launch(t *testing.T) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		t.Skip(err)
	}
	b, err := Launch(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestReloadKeepsStorageNotHeap loads a page twice in one tab: the second
// document sees what the first put in localStorage, not what it kept in a
// variable, and its calls reach the binding in order; a second profile
// sees none of it.
func TestReloadKeepsStorageNotHeap(t *testing.T) {
	b := launch(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><script>
const n = Number(localStorage.getItem("n") || 0) + 1;
localStorage.setItem("n", String(n));
for (let i = 0; i < 3; i++) __line(JSON.stringify({n, i, heap: globalThis.kept || null}));
globalThis.kept = "heap";
console.log("loaded", n);
</script>`)
	}))
	defer srv.Close()
	got := make(chan string, 100)
	logs := make(chan string, 100)
	ev := Events{
		Binding: func(name, payload string) { got <- name + " " + payload },
		Console: func(m chromedp.ConsoleMessage) { logs <- m.Text },
	}
	p, err := b.Profile()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tab, err := p.Open([]string{"__line"}, ev)
	if err != nil {
		t.Fatal(err)
	}
	want := func(s string) {
		t.Helper()
		select {
		case g := <-got:
			if g != s {
				t.Fatalf("got %q, want %q", g, s)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no binding call; want %q", s)
		}
	}
	for n := 1; n <= 2; n++ {
		if err := tab.Load(srv.URL, ""); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			want(fmt.Sprintf(`__line {"n":%d,"i":%d,"heap":null}`, n, i))
		}
		select {
		case l := <-logs:
			if !strings.HasPrefix(l, "loaded") {
				t.Fatalf("console: %q", l)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no console line")
		}
		if err := tab.Unload(); err != nil {
			t.Fatal(err)
		}
	}
	other, err := b.Profile()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tab2, err := other.Open([]string{"__line"}, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab2.Load(srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	want(`__line {"n":1,"i":0,"heap":null}`)
}
