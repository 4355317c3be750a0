package serverchecks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// originServer initializes sessions and records every Origin it is sent;
// with guard set it refuses any Origin but allowed with 403, as the
// specification asks, otherwise it accepts them all.
type originServer struct {
	guard   bool
	allowed string
	mu      sync.Mutex
	seen    []string
	lists   atomic.Int64
}

func (s *originServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o := r.Header.Get("Origin")
	s.mu.Lock()
	s.seen = append(s.seen, o)
	s.mu.Unlock()
	if s.guard && o != "" && o != s.allowed {
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	forgetful(&s.lists).ServeHTTP(w, r)
}

func (s *originServer) origins() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// TestOriginDefault: ORIGIN-403 runs with no profile, sending the reserved
// foreign Origin, and fails a server that accepts it; origins.disallowed
// replaces the default.
func TestOriginDefault(t *testing.T) {
	if got := (target.Origins{}).DisallowedOrigin(); got != "https://mcp-conform.invalid" {
		t.Errorf("default disallowed origin %q", got)
	}
	if got := (target.Origins{Disallowed: "https://evil.example"}).DisallowedOrigin(); got != "https://evil.example" {
		t.Errorf("declared disallowed origin %q", got)
	}
	for _, tt := range []struct {
		name    string
		guard   bool
		origins target.Origins
		want    kit.State
		sent    string
	}{
		{"no profile, guarded", true, target.Origins{}, kit.Passed, target.DefaultDisallowedOrigin},
		{"no profile, unguarded", false, target.Origins{}, kit.Failed, target.DefaultDisallowedOrigin},
		{"declared", true, target.Origins{Allowed: "http://localhost:3000", Disallowed: "https://evil.example"}, kit.Passed, "https://evil.example"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &originServer{guard: tt.guard, allowed: tt.origins.Allowed}
			srv := httptest.NewServer(s)
			defer srv.Close()
			tc := &Target{URL: srv.URL, Config: &target.Profile{Origins: tt.origins}, ProtocolVersion: "2025-11-25"}
			r := kit.Execute(context.Background(), checkOf(t, tc, "ORIGIN-403"), 5*time.Second)
			if r.State != tt.want {
				t.Fatalf("state %v, want %v: %s", r.State, tt.want, r.Message)
			}
			if !slices.Contains(s.origins(), tt.sent) {
				t.Errorf("origins sent %q, want %q among them", s.origins(), tt.sent)
			}
			if tt.want == kit.Failed && !strings.Contains(r.Message, tt.sent) {
				t.Errorf("the failure does not name the origin: %s", r.Message)
			}
		})
	}
}
