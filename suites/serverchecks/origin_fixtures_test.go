package serverchecks

import (
	"net/http"
	"testing"
)

// TestOriginUncheckedSessionless: a 2026-07-28 request from a disallowed
// Origin is served; a 2025-11-25 initialize from it still gets 403.
func TestOriginUncheckedSessionless(t *testing.T) {
	t.Parallel()
	tg := serve(t, "origin-unchecked-sessionless")
	legacy := tg.client("alice-token")
	legacy.Header.Set("Origin", "https://evil.example")
	resp, err := legacy.Initialize(tg.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusForbidden {
		t.Fatalf("2025-11-25 initialize from a disallowed Origin: HTTP %d, want 403", resp.Status)
	}
	modern := tg.modern()
	modern.Header.Set("Origin", "https://evil.example")
	if status, m, _ := tg.do(modern, tg.request(modern, "tools/list", nil, nil)); status != http.StatusOK || m.Error != nil {
		t.Fatalf("2026-07-28 tools/list from a disallowed Origin: HTTP %d %+v, want it served", status, m.Error)
	}
}
