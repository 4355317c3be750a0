package eventstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// FuzzStore runs a sequence of appends, primes, forgets and sweeps decoded
// from the input, and checks the store against a model of everything
// appended: a replay is either refused or exactly the events after its id,
// never a silent gap or other data, and the size bound holds.
func FuzzStore(f *testing.F) {
	f.Add([]byte{0, 10, 0, 20, 1, 0, 3, 5, 0, 40, 2, 0, 0, 1})
	f.Add([]byte{0, 49, 0, 49, 0, 49, 0, 49, 0, 49, 3, 30})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const maxBytes = 200
		s, fc := newFake(Options{MaxBytes: maxBytes, MaxAge: 10 * time.Second})
		model := map[[2]string][][]byte{}
		ctx := context.Background()
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%4, int(ops[i+1])
			key := [2]string{fmt.Sprint("s", arg%3), fmt.Sprint(arg / 3 % 3)}
			switch op {
			case 0:
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
					}
				}
			case 3:
				fc.Step(time.Duration(arg%20) * time.Second)
				s.Sweep()
			}
			if st := s.Stats(); st.Bytes > maxBytes || st.Bytes < 0 || st.Events < 0 {
				t.Fatalf("stats %+v", st)
			}
		}
		for key, all := range model {
			for idx := -1; idx < len(all); idx++ {
				if s.Check(key[0], key[1], idx) != nil {
					continue
				}
				n := idx + 1
				for d, err := range s.After(ctx, key[0], key[1], idx) {
					if err != nil || n >= len(all) || !bytes.Equal(d, all[n]) {
						t.Fatalf("%v after %d: event %d = %q %v, want %q", key, idx, n, d, err, all[min(n, len(all)-1)])
					}
					n++
				}
				if n != len(all) {
					t.Fatalf("%v after %d: replay stopped at %d of %d", key, idx, n, len(all))
				}
			}
		}
	})
}
