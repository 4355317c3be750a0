package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
)

func TestMemory(t *testing.T) {
	m := NewMemory(eventstore.New(eventstore.Options{}))
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if m.Shared() || m.Jobs() != nil {
		t.Fatal("the in-memory store is not shared")
	}
	if err := m.Create(ctx, Session{ID: "A", Principal: "p"}, now); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(ctx, Session{ID: "A", Principal: "p", Version: "2025-11-25"}); err != nil {
		t.Fatal(err)
	}
	if rec, ok, _ := m.Load(ctx, "A"); !ok || rec.Version != "2025-11-25" {
		t.Fatalf("Load = %+v %v", rec, ok)
	}
	if n, _ := m.Increment(ctx, "A"); n != 1 {
		t.Fatalf("Increment = %d", n)
	}
	if _, err := m.Increment(ctx, "B"); !errors.Is(err, ErrGone) {
		t.Fatalf("Increment of unknown id: %v", err)
	}
	if ids, _ := m.StartGrace(ctx, now.Add(time.Second), now.Add(2*time.Second)); len(ids) != 1 {
		t.Fatalf("StartGrace = %v", ids)
	}
	if c, err := m.Touch(ctx, "A", now.Add(time.Second)); err != nil || !c {
		t.Fatalf("Touch in grace = %v %v", c, err)
	}
	if ids, _ := m.Expire(ctx, now.Add(time.Hour)); len(ids) != 0 {
		t.Fatalf("expired %v after the grace was cancelled", ids)
	}
	m.StartGrace(ctx, now.Add(time.Hour), now.Add(time.Hour))
	if ids, _ := m.Expire(ctx, now.Add(time.Hour)); len(ids) != 1 {
		t.Fatalf("Expire = %v", ids)
	}
	if ok, _ := m.Remove(ctx, "A"); ok {
		t.Fatal("removed an expired session again")
	}
}
