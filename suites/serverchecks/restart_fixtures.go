package serverchecks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that come back from a restart wrongly.
func init() {
	servers.Register(servers.Fixture{
		Name: "restart-old-ids-400",
		About: "after a restart, the session ids the previous process issued get 400 \"session not found\" instead of 404: " +
			"it remembers its old ids, not their sessions, and answers them as malformed",
		Breaks: []string{"RESTART-404"},
		Wrap:   restartOldIDs400,
	})
}

// restartOldIDs400 records every session id it issues in a file kept
// across restarts (named by the process's arguments, which hold its
// address), and answers a request for one that this process does not know
// with 400.
func restartOldIDs400(next http.Handler, _ server.Config) http.Handler {
	sum := sha256.Sum256([]byte(strings.Join(os.Args, "\x00")))
	path := filepath.Join(os.TempDir(), "mcp-conform-restart-ids-"+hex.EncodeToString(sum[:8]))
	var mu sync.Mutex
	mine := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		mu.Lock()
		known := mine[sid]
		mu.Unlock()
		if sid != "" && !known {
			old, _ := os.ReadFile(path)
			if slices.Contains(strings.Fields(string(old)), sid) {
				writeError(w, http.StatusBadRequest, "Bad Request: session not found")
				return
			}
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				if id := h.Get(wire.HeaderSessionID); id != "" && code == http.StatusOK {
					mu.Lock()
					if !mine[id] {
						mine[id] = true
						if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
							f.WriteString(id + "\n")
							f.Close()
						}
					}
					mu.Unlock()
				}
				return code
			}
		})
	})
}
