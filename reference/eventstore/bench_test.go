package eventstore

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// notification is about the size of a progress notification on the wire.
var notification = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"job-7f3a9c2e-41d8-4b6a-9e1f-0c5d2b8a6e13","progress":4217,"total":10000,"message":"processing step 4217 of 10000"}}`)

func BenchmarkReplay10k(b *testing.B) {
	ctx := context.Background()
	s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: DefaultMaxBytes})
	for range 10000 {
		if err := s.Append(ctx, "s1", "", notification); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		index int
		want  int
	}{
		{"from_start", -1, 10000},
		{"from_middle", 4999, 5000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range s.After(ctx, "s1", "", bc.index) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != bc.want {
					b.Fatalf("replayed %d events, want %d", n, bc.want)
				}
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	b.Run("growing", func(b *testing.B) {
		s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: DefaultMaxBytes})
		b.SetBytes(int64(len(notification)))
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Append(ctx, "s1", "p", notification); err != nil {
				b.Fatal(err)
			}
		}
	})
	// At the byte bound every append also evicts the oldest event.
	b.Run("at_max_bytes", func(b *testing.B) {
		const maxBytes = 1 << 20
		s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: maxBytes})
		for i := range maxBytes / len(notification) {
			if err := s.Append(ctx, fmt.Sprint("s", i%64), "p", notification); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(notification)))
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Append(ctx, "s1", "p", notification); err != nil {
				b.Fatal(err)
			}
		}
		if st := s.Stats(); st.Bytes > maxBytes {
			b.Fatalf("Bytes = %d over the bound", st.Bytes)
		}
	})
}

// BenchmarkEmptySession measures the heap an opened but empty session
// (its standalone stream only) keeps alive.
func BenchmarkEmptySession(b *testing.B) {
	ctx := context.Background()
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("session-%032d", i)
	}
	s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: DefaultMaxBytes})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		if err := s.Open(ctx, ids[i], ""); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	runtime.KeepAlive(ids)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B/session")
}

// BenchmarkResumeNearEnd resumes near the end of a stream whose history
// is long, mostly priming events of GET reconnects. After replays the last
// 10 events; Prime is a fresh GET resuming after the last message a client
// was sent, with nothing to replay. The cost must follow what is replayed,
// not the history.
func BenchmarkResumeNearEnd(b *testing.B) {
	ctx := context.Background()
	appendN := func(b *testing.B, s *Store, n int) {
		for range n {
			if err := s.Append(ctx, "s1", "", notification); err != nil {
				b.Fatal(err)
			}
		}
	}
	primeN := func(b *testing.B, s *Store, index, n int) {
		for range n {
			if _, err := s.Prime("s1", "", index, false); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, history := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("after/history_%d", history), func(b *testing.B) {
			s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: DefaultMaxBytes})
			appendN(b, s, 1)
			primeN(b, s, 0, history)
			appendN(b, s, 10)
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for d, err := range s.After(ctx, "s1", "", 0) {
					if err != nil {
						b.Fatal(err)
					}
					if len(d) > 0 { // as the go-sdk counts
						n++
					}
				}
				if n != 10 {
					b.Fatalf("replayed %d events, want 10", n)
				}
			}
		})
		b.Run(fmt.Sprintf("prime/history_%d", history), func(b *testing.B) {
			s := New(Options{MaxAge: DefaultMaxAge, MaxBytes: DefaultMaxBytes})
			appendN(b, s, 10)
			primeN(b, s, 9, history)
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Prime("s1", "", 9, false)
				if err != nil || len(p.Backlog) != 0 {
					b.Fatalf("backlog of %d events, %v; want none", len(p.Backlog), err)
				}
			}
		})
	}
}
