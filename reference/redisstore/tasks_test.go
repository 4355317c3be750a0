package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// TestTasksShared: a task stored by one replica is read, listed and
// cancelled through another's task store; a terminal status is never
// overwritten; a running task whose lease lapsed (its replica died) is
// reported failed.
func TestTasksShared(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	sh := s.Tasks()
	now := time.Now()
	running := tasks.Snapshot{ID: "t1", Owner: "alice", Status: tasks.Working, CreatedAt: now, LastUpdatedAt: now, TTL: time.Minute, PollInterval: time.Second}
	if _, err := sh.Put(ctx, running, now.Add(time.Hour), true); err != nil {
		t.Fatal(err)
	}
	b := tasks.New(tasks.Options{Shared: sh})
	defer b.Close()
	if got, err := b.Get("alice", "t1"); err != nil || got.Status != tasks.Working {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := b.Get("mallory", "t1"); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("another owner's Get: %v, want ErrNotFound", err)
	}
	if page, _, err := b.List("alice", ""); err != nil || len(page) != 1 || page[0].ID != "t1" {
		t.Fatalf("List = %+v, %v", page, err)
	}
	if page, _, _ := b.List("mallory", ""); len(page) != 0 {
		t.Fatalf("mallory lists %+v", page)
	}
	if got, err := b.Cancel("alice", "t1"); err != nil || got.Status != tasks.Cancelled {
		t.Fatalf("Cancel = %+v, %v", got, err)
	}
	// The running replica's late completion does not overwrite it.
	done := running
	done.Status, done.Outcome = tasks.Completed, &tasks.Outcome{Result: []byte(`{}`)}
	if got, err := sh.Put(ctx, done, now, false); err != nil || got.Status != tasks.Cancelled {
		t.Fatalf("Put over a cancelled task = %+v, %v", got, err)
	}
	if _, err := b.Cancel("alice", "t1"); !errors.Is(err, tasks.ErrTerminal) {
		t.Fatalf("second Cancel: %v, want ErrTerminal", err)
	}

	lost := running
	lost.ID = "t2"
	if _, err := sh.Put(ctx, lost, now.Add(-time.Millisecond), true); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := b.Result(rctx, "alice", "t2")
	if err != nil || got.Status != tasks.Failed || got.StatusMessage != tasks.LostMessage || got.Outcome == nil || got.Outcome.Error == nil {
		t.Fatalf("Result of a lost task = %+v, %v", got, err)
	}
	if _, err := sh.Put(ctx, tasks.Snapshot{ID: "gone", Status: tasks.Working}, now, false); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("update of a missing task: %v, want ErrNotFound", err)
	}
}

// TestTasksExpire: a terminal task's key expires with its ttl.
func TestTasksExpire(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	now := time.Now()
	snap := tasks.Snapshot{ID: "t", Owner: "", Status: tasks.Completed, CreatedAt: now, LastUpdatedAt: now, TTL: 300 * time.Millisecond}
	if _, err := s.Tasks().Put(ctx, snap, now, true); err != nil {
		t.Fatal(err)
	}
	ttl, err := s.Client().PTTL(ctx, s.p+"task:t").Result()
	if err != nil || ttl <= 0 || ttl > 300*time.Millisecond {
		t.Fatalf("PTTL = %v, %v; want the task's ttl", ttl, err)
	}
}
