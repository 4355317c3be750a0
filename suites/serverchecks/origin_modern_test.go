package serverchecks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// TestOriginSessionless: under 2026-07-28 ORIGIN-403 sends a request of
// that revision, so a server that checks Origin only on initialize (the
// handler of the sessions' era) fails it.
func TestOriginSessionless(t *testing.T) {
	for _, tt := range []struct {
		name        string
		guardModern bool
		want        kit.State
	}{
		{"every request guarded", true, kit.Passed},
		{"only initialize guarded", false, kit.Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				modern := wire.Revision(r.Header.Get(wire.HeaderProtocolVersion)).Sessionless()
				if r.Header.Get("Origin") != "" && (!modern || tt.guardModern) {
					http.Error(w, "forbidden origin", http.StatusForbidden)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"]}}`))
			}))
			defer srv.Close()
			tc := &Target{URL: srv.URL, Config: &target.Profile{}, ProtocolVersion: wire.SessionlessProtocolVersion,
				Sessionless: "the target speaks protocol 2026-07-28"}
			r := kit.Execute(context.Background(), checkOf(t, tc, "ORIGIN-403"), 5*time.Second)
			if r.State != tt.want {
				t.Fatalf("state %v, want %v: %s", r.State, tt.want, r.Message)
			}
			if tt.want == kit.Failed && !strings.Contains(r.Message, "server/discover") {
				t.Errorf("the failure does not name the request: %s", r.Message)
			}
		})
	}
}
