package wire

import (
	"slices"
	"testing"
)

// TestRevisionOrder: revisions are ordered by date; what is not a date
// (empty, malformed, a date-like string that is no date) comes first and
// is at least no revision.
func TestRevisionOrder(t *testing.T) {
	got := []Revision{Revision20260728, "2025-11-25", "", Revision20250326, "9", "2025-13-01", Revision20250618}
	slices.SortStableFunc(got, Revision.Compare)
	want := []Revision{"", "9", "2025-13-01", Revision20250326, Revision20250618, Revision20251125, Revision20260728}
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %q, want %q", got, want)
	}
	for _, tc := range []struct {
		r                        Revision
		sessionless, priming, ok bool
	}{
		{Revision20260728, true, true, true},
		{"2027-01-01", true, true, true},
		{Revision20251125, false, true, true},
		{Revision20250618, false, false, true},
		{"", false, false, false},
		{"zzzz-zz-zz", false, false, false}, // a string above every date
		{"9", false, false, false},
	} {
		if tc.r.Sessionless() != tc.sessionless || tc.r.HasPriming() != tc.priming || tc.r.Valid() != tc.ok {
			t.Errorf("%q: sessionless %v, priming %v, valid %v; want %v, %v, %v", tc.r, tc.r.Sessionless(), tc.r.HasPriming(), tc.r.Valid(), tc.sessionless, tc.priming, tc.ok)
		}
	}
	if SessionlessProtocolVersion != string(Revision20260728) || DefaultProtocolVersion != string(Revision20251125) {
		t.Error("the named versions and revisions differ")
	}
}

// TestParseRevision: a date parses; anything else says what a revision is.
func TestParseRevision(t *testing.T) {
	if r, err := ParseRevision("2025-06-18"); err != nil || r != Revision20250618 {
		t.Errorf("ParseRevision(2025-06-18) = %q, %v", r, err)
	}
	for _, bad := range []string{"", "2025-6-18", "2025-02-30", "latest", "2025-11-25 "} {
		if _, err := ParseRevision(bad); err == nil {
			t.Errorf("ParseRevision(%q) accepted it", bad)
		}
	}
}
