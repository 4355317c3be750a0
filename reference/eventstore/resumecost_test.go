package eventstore

import (
	"context"
	"testing"
)

// TestResumeCostIndependentOfHistory: resuming 10 events from the end of a
// stream looks at as many events, and allocates as much, after 100,000
// events as after 1,000: a resume costs what it replays, not the history
// before it.
func TestResumeCostIndependentOfHistory(t *testing.T) {
	ctx := context.Background()
	type cost struct {
		afterProbes, primeProbes int
		afterAllocs              float64
	}
	measure := func(history int) cost {
		s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: 1 << 30})
		for range history {
			if err := s.Append(ctx, "s1", "", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		from := history - 11 // the last 10 events are missed
		after := func() {
			n := 0
			for _, err := range s.After(ctx, "s1", "", from) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 10 {
				t.Fatalf("history %d: After replayed %d events, want 10", history, n)
			}
		}
		var c cost
		s.probes = 0
		after()
		c.afterProbes = s.probes
		c.afterAllocs = testing.AllocsPerRun(20, after)
		s.probes = 0
		p, err := s.Prime("s1", "", from, false)
		if err != nil || len(p.Backlog) != 10 {
			t.Fatalf("history %d: Prime backlog of %d events, %v; want 10", history, len(p.Backlog), err)
		}
		c.primeProbes = s.probes
		return c
	}
	small, large := measure(1000), measure(100000)
	t.Logf("history 1000: %+v; history 100000: %+v", small, large)
	// A binary search looks at log2(history) events: 7 more for 100x.
	for _, c := range []struct {
		what         string
		small, large int
	}{
		{"After", small.afterProbes, large.afterProbes},
		{"Prime", small.primeProbes, large.primeProbes},
	} {
		if c.large > 2*17 || c.large > c.small+8 {
			t.Errorf("%s looked at %d events after a history of 1000 and %d after 100000; want about log2(history)", c.what, c.small, c.large)
		}
	}
	if small.afterAllocs != large.afterAllocs {
		t.Errorf("After allocates %v times after a history of 1000 and %v after 100000", small.afterAllocs, large.afterAllocs)
	}
}
