package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// taskStore keeps tasks in Redis for every replica: a hash per task
// (status, the snapshot as JSON, the lease in unix ms) that expires with
// the task's ttl, and a sorted set per owner of its task ids by creation.
type taskStore struct{ s *Store }

// Tasks implements store.Store.
func (s *Store) Tasks() tasks.Shared { return taskStore{s} }

// lostKeep is how long a running task's record outlives its lease, so a
// reader can still report a task whose replica died as failed.
const lostKeep = time.Minute

func (t taskStore) key(id string) string      { return t.s.p + "task:" + id }
func (t taskStore) index(owner string) string { return t.s.p + "tasks:" + owner }

// putScript stores a task unless it is terminal already (terminal never
// changes, whichever replica decided it); an update of a task that is gone
// (expired) stores nothing. It returns the stored snapshot and lease.
var putScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'completed' or st == 'failed' or st == 'cancelled' then
  return redis.call('HMGET', KEYS[1], 'snap', 'lease')
end
if not st and ARGV[4] == '0' then return false end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'snap', ARGV[2], 'lease', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[8]) then redis.call('PEXPIRE', KEYS[2], ARGV[8]) end
end
return {ARGV[2], ARGV[3]}`)

func (t taskStore) Put(ctx context.Context, snap tasks.Snapshot, lease time.Time, create bool) (tasks.Snapshot, error) {
	data, err := json.Marshal(snap)
	if err != nil {
		return tasks.Snapshot{}, err
	}
	until := snap.CreatedAt.Add(snap.TTL)
	if !snap.Status.Terminal() {
		until = maxTime(until, lease).Add(lostKeep)
	}
	flag := "0"
	if create {
		flag = "1"
	}
	keep := max(time.Until(until), time.Millisecond)
	ctx, cancel := bounded(ctx)
	defer cancel()
	res, err := putScript.Run(ctx, t.s.rdb, []string{t.key(snap.ID), t.index(snap.Owner)},
		string(snap.Status), data, ms(lease), flag, ms(until), ms(snap.CreatedAt), snap.ID, keep.Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return tasks.Snapshot{}, fmt.Errorf("%w: %q", tasks.ErrNotFound, snap.ID)
	}
	if err != nil {
		return tasks.Snapshot{}, err
	}
	stored, _, err := decodeTask(snap.ID, res)
	return stored, err
}

func (t taskStore) Load(ctx context.Context, id string) (tasks.Snapshot, time.Time, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	res, err := t.s.rdb.HMGet(ctx, t.key(id), "snap", "lease").Result()
	if err != nil {
		return tasks.Snapshot{}, time.Time{}, err
	}
	return decodeTask(id, res)
}

func (t taskStore) List(ctx context.Context, owner string) ([]tasks.Snapshot, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	ids, err := t.s.rdb.ZRange(ctx, t.index(owner), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	if _, err := t.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, t.key(id), "snap", "lease")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var out []tasks.Snapshot
	var gone []any
	for i, c := range cmds {
		snap, _, err := decodeTask(ids[i], c.Val())
		if errors.Is(err, tasks.ErrNotFound) {
			gone = append(gone, ids[i])
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	if len(gone) > 0 {
		t.s.rdb.ZRem(ctx, t.index(owner), gone...)
	}
	return out, nil
}

// decodeTask reads a [snap, lease] reply; a missing task is ErrNotFound.
func decodeTask(id string, res []any) (tasks.Snapshot, time.Time, error) {
	if len(res) != 2 || res[0] == nil {
		return tasks.Snapshot{}, time.Time{}, fmt.Errorf("%w: %q", tasks.ErrNotFound, id)
	}
	data, _ := res[0].(string)
	var snap tasks.Snapshot
	if err := json.Unmarshal([]byte(data), &snap); err != nil {
		return tasks.Snapshot{}, time.Time{}, fmt.Errorf("task %q: %w", id, err)
	}
	var lease time.Time
	if l, ok := res[1].(string); ok {
		n, _ := strconv.ParseInt(l, 10, 64)
		lease = time.UnixMilli(n)
	}
	return snap, lease, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
