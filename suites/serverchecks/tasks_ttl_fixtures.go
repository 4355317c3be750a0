package serverchecks

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

// grantedTTL is the ttl grantTTL gives every task whose creation asks for
// one: far longer than any check's budget.
const grantedTTL = 300 * time.Second

// grantTTL makes the server grant ttl to every task created with a
// requested ttl, whatever was asked, as a receiver may: it rewrites the
// request's params.task.ttl (ttlMs in the extension), so the server keeps
// the task that long and reports it.
func grantTTL(next http.Handler, ttl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k, ok := peekTask(r); ok && k.method == "tools/call" && k.ttl != nil {
			if body, ok := withTTL(servers.PeekBody(r), ttl); ok {
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// withTTL is a tools/call body with the ttl of its params.task set to
// ttl, in the field the request used.
func withTTL(body []byte, ttl time.Duration) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber() // the id and arguments as sent
	var m map[string]any
	if d.Decode(&m) != nil {
		return nil, false
	}
	params, _ := m["params"].(map[string]any)
	task, _ := params["task"].(map[string]any)
	if task == nil {
		return nil, false
	}
	for _, field := range []string{"ttl", "ttlMs"} {
		if _, ok := task[field]; ok {
			task[field] = ttl.Milliseconds()
		}
	}
	out, err := json.Marshal(m)
	return out, err == nil
}
