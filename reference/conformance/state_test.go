package conformance

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSealer: a requestState opens only intact, for the principal and the
// issuer it was sealed for, before it expires, and within the size bound.
func TestSealer(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewSealer(func() time.Time { return now })
	state, err := s.Seal("alice", "tool", map[string]int{"round": 2})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := s.Open("alice", "tool", state, &got); err != nil || got["round"] != 2 {
		t.Fatalf("intact state: %v %v", got, err)
	}
	body, sig, _ := strings.Cut(state, ".")
	for what, bad := range map[string]func() error{
		"tampered":        func() error { return s.Open("alice", "tool", state+"-TAMPERED", &got) },
		"payload swapped": func() error { return s.Open("alice", "tool", body[1:]+"."+sig, &got) },
		"no signature":    func() error { return s.Open("alice", "tool", body, &got) },
		"other principal": func() error { return s.Open("mallory", "tool", state, &got) },
		"other issuer":    func() error { return s.Open("alice", "other", state, &got) },
		"other key":       func() error { return NewSealer(nil).Open("alice", "tool", state, &got) },
		"oversized":       func() error { return s.Open("alice", "tool", strings.Repeat("a", MaxStateBytes+1), &got) },
	} {
		if err := bad(); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v, want ErrBadState", what, err)
		}
	}
	now = now.Add(StateTTL + time.Millisecond)
	if err := s.Open("alice", "tool", state, &got); !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired state: %v", err)
	}
}
