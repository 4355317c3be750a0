// Package brokenpages holds the broken pages of the browser checks: the
// reference browser client with one behaviour taken away, each proving a
// CLI-BROWSER-* check can fail. Program wasm/ is the page, which takes
// the variant from its URL (?broken=NAME); make test grades each with
// `mcp-conform client --browser`.
package brokenpages

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/reference/browserclient"
)

// Page is one broken page.
type Page struct {
	Name string
	// About says what is broken, as a user would observe it.
	About string
	// Breaks lists the client checks that must fail against it under
	// --browser; every other check must pass.
	Breaks []string
	// Options make it.
	Options browserclient.Options
}

// Param is the URL parameter that names the variant.
const Param = "broken"

// All returns the broken pages.
func All() []Page {
	return []Page{
		{Name: "page-no-resume", About: "a page loaded to resume the call in flight does nothing and says it is done",
			Breaks:  []string{"CLI-BROWSER-RELOAD", "CLI-RESUME"},
			Options: browserclient.Options{Around: skipResume}},
		{Name: "page-tabs-share-session", About: "a second tab uses the stored session as the first tab does, with no lock between them: their GET streams take the session's stream from each other",
			Breaks:  []string{"CLI-BROWSER-SECOND-TAB"},
			Options: browserclient.Options{SharedTabs: true}},
		offlineFatal(),
	}
}

// Lookup returns the broken page name.
func Lookup(name string) (Page, error) {
	for _, p := range All() {
		if p.Name == name {
			return p, nil
		}
	}
	return Page{}, fmt.Errorf("no broken page %q", name)
}

func skipResume(r contract.Run, call func() error) error {
	if r.Action == contract.ActionResume {
		return nil
	}
	return call()
}

// offlineFatal is the page that gives up once a request of it failed for
// another reason than its own cancel: every later request fails, and the
// run ends with that error at once.
func offlineFatal() Page {
	dead := make(chan struct{})
	var once sync.Once
	errDead := errors.New("the network failed once: this page gives up")
	transport := func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			select {
			case <-dead:
				return nil, errDead
			default:
			}
			resp, err := next.RoundTrip(req)
			if err != nil && req.Context().Err() == nil {
				once.Do(func() { close(dead) })
			}
			return resp, err
		})
	}
	around := func(_ contract.Run, call func() error) error {
		done := make(chan error, 1)
		go func() { done <- call() }()
		select {
		case err := <-done:
			return err
		case <-dead:
			return errDead
		}
	}
	return Page{Name: "page-offline-fatal", About: "once a request of the page failed for want of a network, every later request fails and the page gives up: it never recovers from going offline",
		Breaks:  []string{"CLI-BROWSER-OFFLINE"},
		Options: browserclient.Options{Transport: transport, Around: around}}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
