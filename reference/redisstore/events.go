package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// events is the replay store on Redis. Per (session, stream): a hash of
// marks ("last": index of the last append, "floor": highest index of an
// evicted event, "r<i>": the resume point of priming event i) and a sorted
// set of events with data, scored by index, member "INDEX DATA". A global
// sorted set orders every stored event by append time for eviction (by age
// on Sweep, by bytes on Append); members "SESSION|STREAM|INDEX|SIZE".
// Indexes are the same as the in-memory store's (eventstore), so event ids
// mean the same on every replica.
type events struct{ s *Store }

func (e *events) metaKey(sid, st string) string { return e.s.p + "em:" + sid + ":" + st }
func (e *events) dataKey(sid, st string) string { return e.s.p + "ev:" + sid + ":" + st }
func (e *events) streamsKey(sid string) string  { return e.s.p + "es:" + sid }
func (e *events) channel(sid, st string) string { return e.s.p + "ch:" + sid + ":" + st }
func (e *events) queueKey() string              { return e.s.p + "eq" }
func (e *events) bytesKey() string              { return e.s.p + "ebytes" }

// luaEvict pops the oldest event of the queue: with its stream's floor raised.
const luaEvict = `
local function evict_oldest(prefix, q, bytes)
  local m = redis.call('ZPOPMIN', q)
  if #m == 0 then return false end
  local sid, st, ix, size = string.match(m[1], '^([^|]*)|([^|]*)|(%d+)|(%d+)$')
  if sid == nil then return true end
  redis.call('ZREMRANGEBYSCORE', prefix .. 'ev:' .. sid .. ':' .. st, ix, ix)
  local mk = prefix .. 'em:' .. sid .. ':' .. st
  if redis.call('EXISTS', mk) == 1 and tonumber(redis.call('HGET', mk, 'floor')) < tonumber(ix) then
    redis.call('HSET', mk, 'floor', ix)
  end
  redis.call('DECRBY', bytes, size)
  return true
end
`

const luaInit = `
local function init_meta(mk)
  if redis.call('EXISTS', mk) == 0 then redis.call('HSET', mk, 'last', -1, 'floor', -1) end
end
`

// KEYS: meta, data, streams, queue, bytes, channel
// ARGV: prefix, sid, stream, data, now_ms, max_bytes
var appendScript = redis.NewScript(luaEvict + luaInit + `
init_meta(KEYS[1])
redis.call('SADD', KEYS[3], ARGV[3])
local ix = redis.call('HINCRBY', KEYS[1], 'last', 1)
local data = ARGV[4]
if #data == 0 then return ix end
local max = tonumber(ARGV[6])
if max > 0 and #data > max then
  redis.call('HSET', KEYS[1], 'floor', ix)
  return ix
end
redis.call('ZADD', KEYS[2], ix, ix .. ' ' .. data)
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[2] .. '|' .. ARGV[3] .. '|' .. ix .. '|' .. #data)
local total = redis.call('INCRBY', KEYS[5], #data)
redis.call('PUBLISH', KEYS[6], ix .. ' ' .. data)
while max > 0 and total > max do
  if not evict_oldest(ARGV[1], KEYS[4], KEYS[5]) then break end
  total = tonumber(redis.call('GET', KEYS[5]) or '0')
end
return ix`)

// KEYS: meta, data. ARGV: index, want_data.
// Returns {status, events...}: 0 ok, 1 unknown, 2 evicted, 3 future, 4 torn.
var afterScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {1} end
if redis.call('HEXISTS', KEYS[1], 'torn') == 1 then return {4} end
local last = tonumber(redis.call('HGET', KEYS[1], 'last'))
local floor = tonumber(redis.call('HGET', KEYS[1], 'floor'))
local ix = tonumber(ARGV[1])
if ix > last then return {3} end
if ix < floor then return {2} end
if ARGV[2] == '0' then return {0} end
local out = {0}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1+1], '(' .. ix, '+inf')) do table.insert(out, m) end
return out`)

// KEYS: meta, data. ARGV: index, skip_evicted.
// Returns {status, priming index, events...}; a priming event followed by a
// backlog maps to its resume point, so resuming from it replays the backlog.
var primeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {1} end
if redis.call('HEXISTS', KEYS[1], 'torn') == 1 then return {4} end
local last = tonumber(redis.call('HGET', KEYS[1], 'last'))
local floor = tonumber(redis.call('HGET', KEYS[1], 'floor'))
local ix = tonumber(ARGV[1])
local mapped = redis.call('HGET', KEYS[1], 'r' .. ix)
if mapped then ix = tonumber(mapped) end
if ix > last then return {3} end
if ix < floor then
  if ARGV[2] == '0' then return {2} end
  ix = floor
end
local backlog = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ix, '+inf')
local p = redis.call('HINCRBY', KEYS[1], 'last', 1)
if #backlog > 0 then redis.call('HSET', KEYS[1], 'r' .. p, ix) end
local out = {0, p}
for _, m in ipairs(backlog) do table.insert(out, m) end
return out`)

// KEYS: streams, queue, bytes. ARGV: prefix, sid.
var forgetScript = redis.NewScript(`
for _, st in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local dk = ARGV[1] .. 'ev:' .. ARGV[2] .. ':' .. st
  for _, m in ipairs(redis.call('ZRANGE', dk, 0, -1)) do
    local ix, data = string.match(m, '^(%d+) (.*)$')
    if redis.call('ZREM', KEYS[2], ARGV[2] .. '|' .. st .. '|' .. ix .. '|' .. #data) == 1 then
      redis.call('DECRBY', KEYS[3], #data)
    end
  end
  redis.call('DEL', dk, ARGV[1] .. 'em:' .. ARGV[2] .. ':' .. st)
end
redis.call('DEL', KEYS[1])
return 1`)

// KEYS: queue, bytes. ARGV: prefix, cutoff_ms.
var sweepScript = redis.NewScript(luaEvict + `
local n = 0
while true do
  local m = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #m == 0 or tonumber(m[2]) > tonumber(ARGV[2]) then break end
  evict_oldest(ARGV[1], KEYS[1], KEYS[2])
  n = n + 1
end
return n`)

func (e *events) Open(ctx context.Context, sessionID, streamID string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	mk := e.metaKey(sessionID, streamID)
	n, hasN := eventstore.Requests(ctx)
	_, err := e.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if hasN && streamID != "" {
			p.HSetNX(ctx, mk, "pending", n)
		}
		p.HSetNX(ctx, mk, "last", -1)
		p.HSetNX(ctx, mk, "floor", -1)
		p.SAdd(ctx, e.streamsKey(sessionID), streamID)
		return nil
	})
	return err
}

func (e *events) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	ctx, cancel := bounded(context.WithoutCancel(ctx))
	defer cancel()
	return appendScript.Run(ctx, e.s.rdb,
		[]string{e.metaKey(sessionID, streamID), e.dataKey(sessionID, streamID), e.streamsKey(sessionID), e.queueKey(), e.bytesKey(), e.channel(sessionID, streamID)},
		e.s.p, sessionID, streamID, data, time.Now().UnixMilli(), e.s.maxBytes).Err()
}

func statusErr(code int64, sessionID, streamID string, index int) error {
	switch code {
	case 1:
		return eventstore.ErrUnknownStream
	case 2:
		return eventstore.ErrEvicted
	case 3:
		return eventstore.ErrFutureIndex
	case 4:
		return store.ErrNotStored
	}
	return nil
}

// Tear marks a stream that missed events while Redis was out of reach
// (the server appends none of its later ones): resuming it is refused on
// every replica rather than replayed with a gap.
func (e *events) Tear(sessionID, streamID string) error {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	_, err := e.s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, e.metaKey(sessionID, streamID), "torn", 1)
		p.SAdd(ctx, e.streamsKey(sessionID), streamID) // forgotten with the session
		return nil
	})
	return err
}

// parseEvents decodes "INDEX DATA" members.
func parseEvents(members []any) []eventstore.Event {
	out := make([]eventstore.Event, 0, len(members))
	for _, m := range members {
		str, _ := m.(string)
		ix, data, _ := strings.Cut(str, " ")
		i, err := strconv.Atoi(ix)
		if err != nil {
			continue
		}
		out = append(out, eventstore.Event{Index: i, Data: []byte(data)})
	}
	return out
}

// Range returns the events with data after index, or what Check says.
func (e *events) Range(ctx context.Context, sessionID, streamID string, index int) ([]eventstore.Event, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	v, err := afterScript.Run(ctx, e.s.rdb, []string{e.metaKey(sessionID, streamID), e.dataKey(sessionID, streamID)}, max(index, -1), "1").Slice()
	if err != nil {
		return nil, err
	}
	if code, _ := v[0].(int64); code != 0 {
		return nil, statusErr(code, sessionID, streamID, index)
	}
	return parseEvents(v[1:]), nil
}

func (e *events) After(ctx context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		evs, err := e.Range(ctx, sessionID, streamID, index)
		switch {
		case err == eventstore.ErrFutureIndex:
			return
		case err != nil:
			yield(nil, fmt.Errorf("%w: session %q, stream %q, after index %d", err, sessionID, streamID, index))
			return
		}
		for _, ev := range evs {
			if !yield(ev.Data, nil) {
				return
			}
		}
	}
}

func (e *events) Check(sessionID, streamID string, index int) error {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	v, err := afterScript.Run(ctx, e.s.rdb, []string{e.metaKey(sessionID, streamID), e.dataKey(sessionID, streamID)}, max(index, -1), "0").Slice()
	if err != nil {
		return err
	}
	code, _ := v[0].(int64)
	return statusErr(code, sessionID, streamID, index)
}

func (e *events) Prime(sessionID, streamID string, index int, skipEvicted bool) (eventstore.Priming, error) {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	skip := "0"
	if skipEvicted {
		skip = "1"
	}
	v, err := primeScript.Run(ctx, e.s.rdb, []string{e.metaKey(sessionID, streamID), e.dataKey(sessionID, streamID)}, max(index, -1), skip).Slice()
	if err != nil {
		return eventstore.Priming{}, err
	}
	if code, _ := v[0].(int64); code != 0 {
		return eventstore.Priming{}, statusErr(code, sessionID, streamID, index)
	}
	p, _ := v[1].(int64)
	return eventstore.Priming{Index: int(p), Backlog: parseEvents(v[2:])}, nil
}

// SessionClosed does nothing: the server forgets a session's events when
// the session really ends (see eventstore.Store.SessionClosed).
func (e *events) SessionClosed(context.Context, string) error { return nil }

func (e *events) Forget(sessionID string) {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	forgetScript.Run(ctx, e.s.rdb, []string{e.streamsKey(sessionID), e.queueKey(), e.bytesKey()}, e.s.p, sessionID)
}

// Stats counts events and bytes; sessions and streams are not counted.
func (e *events) Stats() eventstore.Stats {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	n, _ := e.s.rdb.ZCard(ctx, e.queueKey()).Result()
	b, _ := e.s.rdb.Get(ctx, e.bytesKey()).Int64()
	return eventstore.Stats{Events: int(n), Bytes: b, Cost: b}
}

// Sweep evicts events older than the max age.
func (e *events) Sweep() {
	if e.s.maxAge <= 0 {
		return
	}
	ctx, cancel := bounded(context.Background())
	defer cancel()
	cutoff := time.Now().Add(-e.s.maxAge).UnixMilli()
	sweepScript.Run(ctx, e.s.rdb, []string{e.queueKey(), e.bytesKey()}, e.s.p, cutoff)
}

// Run sweeps every cleanup interval until ctx ends. Every replica sweeps;
// the script makes each eviction once.
func (e *events) Run(ctx context.Context) {
	t := time.NewTicker(e.s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.Sweep()
		}
	}
}

// Replay implements store.Store.
func (s *Store) Replay(ctx context.Context, sessionID, streamID string, index int) ([]eventstore.Event, error) {
	return s.ev.Range(ctx, sessionID, streamID, index)
}

// Requests implements store.Store: the count the POST was opened with.
func (s *Store) Requests(ctx context.Context, sessionID, streamID string) int {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := s.hgetInt(ctx, s.ev.metaKey(sessionID, streamID), "pending", 1)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func (s *Store) leaseKey(sid, st string) string { return s.p + "run:" + sid + ":" + st }

// Lease implements store.Store: a key that lapses unless renewed, and the
// ids on the stream's marks, which outlive it.
func (s *Store) Lease(ctx context.Context, sessionID, streamID string, ids []json.RawMessage, ttl time.Duration) error {
	data, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.leaseKey(sessionID, streamID), 1, ttl)
		p.HSet(ctx, s.ev.metaKey(sessionID, streamID), "ids", data)
		return nil
	})
	return err
}

// Leased implements store.Store.
func (s *Store) Leased(ctx context.Context, sessionID, streamID string) (bool, []json.RawMessage, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := s.rdb.Exists(ctx, s.leaseKey(sessionID, streamID)).Result()
	if err != nil {
		return false, nil, err
	}
	var ids []json.RawMessage
	if data, err := s.rdb.HGet(ctx, s.ev.metaKey(sessionID, streamID), "ids").Bytes(); err == nil {
		json.Unmarshal(data, &ids)
	}
	return n > 0, ids, nil
}

// Claim implements store.Store with SET NX.
func (s *Store) Claim(ctx context.Context, name string, ttl time.Duration) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return s.rdb.SetNX(ctx, s.p+"claim:"+name, 1, ttl).Result()
}
