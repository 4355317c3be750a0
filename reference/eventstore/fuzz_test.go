package eventstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// FuzzStore runs a sequence of appends, primes, forgets, sweeps and POST
// streams that finish (opened with WithRequests, then answered) decoded
// from the input, and checks the store against a model of everything
// appended: a replay is either refused or exactly the events with data
// after its id, never a silent gap or other data; numbering never restarts
// while a stream is known; and the internal invariants, the bound among
// them, hold after every step.
func FuzzStore(f *testing.F) {
	f.Add([]byte{0, 10, 0, 20, 1, 0, 3, 5, 0, 40, 2, 0, 0, 1})
	f.Add([]byte{0, 49, 0, 49, 0, 49, 0, 49, 0, 49, 3, 30})
	f.Add([]byte{4, 3, 0, 3, 5, 3, 1, 3, 4, 4, 5, 4, 0, 49, 0, 49, 0, 49, 3, 19, 3, 19})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const maxBytes = 2000
		s, fc := newFake(Options{MaxBytes: maxBytes, MaxAge: 10 * time.Second})
		model := map[[2]string][][]byte{}
		opened := map[[2]string]bool{}   // opened with one request
		finished := map[[2]string]bool{} // that request was answered: no more events
		ctx := context.Background()
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%6, int(ops[i+1])
			key := [2]string{fmt.Sprint("s", arg%3), fmt.Sprint(arg / 3 % 3)}
			switch op {
			case 0:
				if finished[key] {
					continue
				}
				d := bytes.Repeat([]byte{byte('a' + i%26)}, arg%50)
				s.Append(ctx, key[0], key[1], d)
				model[key] = append(model[key], d)
			case 1:
				if p, err := s.Prime(key[0], key[1], -1, true); err == nil {
					if p.Index != len(model[key]) {
						t.Fatalf("prime index %d, want %d", p.Index, len(model[key]))
					}
					model[key] = append(model[key], nil)
				}
			case 2:
				s.Forget(key[0])
				for k := range model {
					if k[0] == key[0] {
						delete(model, k)
						delete(opened, k)
						delete(finished, k)
					}
				}
			case 3:
				fc.Step(time.Duration(arg%20) * time.Second)
				s.Sweep()
			case 4:
				if _, ok := model[key]; ok {
					continue
				}
				s.Open(WithRequests(ctx, 1), key[0], key[1])
				model[key] = nil
				opened[key] = true
			case 5:
				if !opened[key] || finished[key] {
					continue
				}
				d := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, i)
				s.Append(ctx, key[0], key[1], d)
				model[key] = append(model[key], d)
				finished[key] = true
			}
			checkInvariants(t, s)
		}
		for key, all := range model {
			if last, ok := s.LastIndex(key[0], key[1]); ok && last != len(all)-1 {
				t.Fatalf("%v: LastIndex %d, want %d", key, last, len(all)-1)
			}
			for idx := -1; idx < len(all); idx++ {
				if s.Check(key[0], key[1], idx) != nil {
					continue
				}
				var want [][]byte
				for _, d := range all[idx+1:] {
					if len(d) > 0 {
						want = append(want, d)
					}
				}
				n := 0
				for d, err := range s.After(ctx, key[0], key[1], idx) {
					if err != nil || n >= len(want) || !bytes.Equal(d, want[n]) {
						t.Fatalf("%v after %d: event %d = %q %v; want %q", key, idx, n, d, err, want)
					}
					n++
				}
				if n != len(want) {
					t.Fatalf("%v after %d: replay stopped at %d of %d", key, idx, n, len(want))
				}
			}
		}
	})
}
