package registry

import (
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New("thing", func(s string) string { return s })
	r.Add("b", "a")
	if got := r.All(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("All = %v", got)
	}
	if got, err := r.Lookup("b"); err != nil || got != "b" {
		t.Errorf("Lookup(b) = %q, %v", got, err)
	}
	if _, err := r.Lookup("c"); err == nil || !strings.Contains(err.Error(), `unknown thing "c"; known: a, b`) {
		t.Errorf("Lookup(c) = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate name did not panic")
		}
	}()
	r.Add("a")
}
