package clientchecks

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// listenTwice is a client that holds duplicate subscriptions: it opens two
// subscriptions/listen streams at once and prints what both deliver,
// never listening again.
func listenTwice(url string) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"listen-%d","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, i)
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set(wire.HeaderProtocolVersion, wire.SessionlessProtocolVersion)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, "list_changed") {
					mu.Lock()
					fmt.Printf(`{"type":"notification","method":"notifications/tools/list_changed","params":%s}`+"\n", data)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	select {}
}

// TestListenAgainDuplicate: a client with two listen streams open at once
// fails CLI-LISTEN-AGAIN, though the second stream delivers the
// notifications.
func TestListenAgainDuplicate(t *testing.T) {
	t.Parallel()
	cl := &Client{Command: helperCommand(t, "listen-twice"), Measured: fastClient, ProtocolVersion: wire.SessionlessProtocolVersion}
	r := runCheck(t, cl, "CLI-LISTEN-AGAIN", 0)
	if r.State != kit.Failed || !strings.Contains(r.Message, "two listen streams at once") {
		t.Errorf("state %v, message %q; want failed: two listen streams at once", r.State, r.Message)
	}
}
