package eventstore

import (
	"context"
	"testing"
)

// TestHoldCharges: what the server holds is charged like the store's own
// items: room is made by evicting the oldest events, a charge that cannot
// fit even then is refused, and Unhold gives it back.
func TestHoldCharges(t *testing.T) {
	const maxBytes = 4096
	s, _ := newFake(Options{MaxBytes: maxBytes})
	ctx := context.Background()
	for range 20 {
		if err := s.Append(ctx, "s1", "", progress); err != nil {
			t.Fatal(err)
		}
	}
	before := s.Stats()
	if !s.Hold(1000) {
		t.Fatal("Hold(1000) refused")
	}
	after := s.Stats()
	if after.Held != 1000 || after.Cost > maxBytes || after.Events >= before.Events {
		t.Fatalf("after Hold(1000): %+v (before %+v); want it charged, the total within %d, old events evicted", after, before, maxBytes)
	}
	if s.Hold(maxBytes) {
		t.Fatalf("Hold(%d) accepted with 1000 held already: %+v", maxBytes, s.Stats())
	}
	if st := s.Stats(); st.Held != 1000 {
		t.Fatalf("a refused Hold charged: %+v", st)
	}
	s.Unhold(1000)
	if st := s.Stats(); st.Held != 0 || st.Cost != after.Cost-1000 {
		t.Fatalf("after Unhold: %+v", st)
	}
}
