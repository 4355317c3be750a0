package server

import "testing"

// TestRevisionAtLeast: revisions are compared as dates; a header that is
// not one (empty, malformed, a string that sorts after every date) is
// never at least a revision.
func TestRevisionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v, min string
		want   bool
	}{
		{"2025-11-25", "2025-11-25", true},
		{"2026-07-28", "2025-11-25", true},
		{"2025-06-18", "2025-11-25", false},
		{"", "2025-11-25", false},
		{"zzzz", "2025-11-25", false},
		{"2025-11-25x", "2025-11-25", false},
		{"9999-99-99", "2025-11-25", false},
	} {
		if got := revisionAtLeast(tc.v, tc.min); got != tc.want {
			t.Errorf("revisionAtLeast(%q, %q) = %v, want %v", tc.v, tc.min, got, tc.want)
		}
	}
}
