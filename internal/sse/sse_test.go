package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReader(t *testing.T) {
	in := ": ok\n\nretry: 1000\n\nevent: prime\nid: a_0\ndata: \n\nid: a_1\r\ndata: {\"x\":1}\r\ndata: two\r\n\r\nretry: 500\rid: a_2\r\rdata: partial"
	r := NewReader(strings.NewReader(in))
	want := []Event{
		{Retry: time.Second, HasRetry: true},
		{Name: "prime", ID: "a_0", HasID: true, HasData: true},
		{ID: "a_1", HasID: true, Data: "{\"x\":1}\ntwo", HasData: true},
		{ID: "a_2", HasID: true, Retry: 500 * time.Millisecond, HasRetry: true},
	}
	retryOnly := []bool{true, false, false, false}
	for i, w := range want {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got != w {
			t.Errorf("event %d = %+v, want %+v", i, got, w)
		}
		if got.RetryOnly() != retryOnly[i] {
			t.Errorf("event %d: RetryOnly() = %v, want %v", i, got.RetryOnly(), retryOnly[i])
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after last event: err = %v, want EOF (partial event discarded)", err)
	}
	if r.Comments != 1 {
		t.Errorf("Comments = %d, want 1", r.Comments)
	}
}

func TestReaderTooLarge(t *testing.T) {
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", MaxEventSize+1) + "\n\n"))
	if _, err := r.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add("event: a\nid: 1\ndata: x\n\n")
	f.Add("retry: -1\r\r\n:\n")
	f.Fuzz(func(t *testing.T, s string) {
		r := NewReader(strings.NewReader(s))
		for i := 0; i < len(s)+1; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
		t.Fatal("reader returned more events than input bytes")
	})
}
