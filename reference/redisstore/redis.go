// Package redisstore is the reference server's store on Redis: every piece
// of cross-request state lives in Redis, so any replica serves any request
// of any session. Decisions that must be taken once (removing a session,
// expiring it after its grace period, numbering an event) are Lua scripts,
// atomic in Redis; live events reach the replica holding a stream through
// pub/sub.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// Options configure a Store.
type Options struct {
	// URL is redis://HOST:PORT/DB.
	URL string
	// Prefix of every key and channel; default "mcpc:".
	Prefix string
	// Event bounds, as in eventstore.Options.
	MaxAge          time.Duration
	CleanupInterval time.Duration
	MaxBytes        int64
}

// Store is a store.Store on Redis.
type Store struct {
	rdb      *redis.Client
	p        string
	maxAge   time.Duration
	interval time.Duration
	maxBytes int64
	ev       *events
	health   *health
}

var _ store.Store = (*Store)(nil)

// opTimeout bounds one store operation, so a dead or stopped Redis fails
// a request rather than hanging it; once one has failed, the others fail
// at once until Redis answers again (see health).
const opTimeout = 5 * time.Second

// New connects to Redis and checks that it answers.
func New(ctx context.Context, o Options) (*Store, error) {
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("store URL %q: %w (want redis://HOST:PORT/DB)", o.URL, err)
	}
	opt.DisableIdentity = true
	// The context's deadline (opTimeout) bounds every command, its
	// retries and its socket reads and writes: without it a stopped Redis
	// holds a command for the client's read timeout, retries included.
	opt.ContextTimeoutEnabled = true
	// A refused dial is retried with the command, not five times more
	// inside each attempt: a dead Redis is found in tens of milliseconds.
	opt.DialerRetries = 1
	rdb := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redis at %s: %w", opt.Addr, err)
	}
	if o.Prefix == "" {
		o.Prefix = "mcpc:"
	}
	if o.CleanupInterval <= 0 {
		o.CleanupInterval = eventstore.DefaultCleanupInterval
	}
	s := &Store{rdb: rdb, p: o.Prefix, maxAge: max(o.MaxAge, 0), interval: o.CleanupInterval, maxBytes: max(o.MaxBytes, 0)}
	s.ev = &events{s: s}
	s.health = newHealth(rdb)
	return s, nil
}

// Client is the underlying Redis client.
func (s *Store) Client() *redis.Client { return s.rdb }

func (s *Store) Shared() bool         { return true }
func (s *Store) Events() store.Events { return s.ev }
func (s *Store) Close() error {
	s.health.close()
	return s.rdb.Close()
}

func (s *Store) sessKey(id string) string { return s.p + "s:" + id }
func (s *Store) actKey() string           { return s.p + "active" }
func (s *Store) graceKey() string         { return s.p + "grace" }
func (s *Store) goneChan() string         { return s.p + "gone" }

func ms(t time.Time) int64 { return t.UnixMilli() }

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opTimeout)
}

func (s *Store) Create(ctx context.Context, rec store.Session, now time.Time) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.sessKey(rec.ID), "principal", rec.Principal, "version", rec.Version, "init", rec.Init, "counter", 0, "delivered", -1, "listeners", 0)
		p.ZAdd(ctx, s.actKey(), redis.Z{Score: float64(ms(now)), Member: rec.ID})
		return nil
	})
	return err
}

var saveScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'principal', ARGV[1], 'version', ARGV[2], 'init', ARGV[3])
return 1`)

func (s *Store) Save(ctx context.Context, rec store.Session) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := saveScript.Run(ctx, s.rdb, []string{s.sessKey(rec.ID)}, rec.Principal, rec.Version, rec.Init).Int()
	if err == nil && n == 0 {
		err = store.ErrGone
	}
	return err
}

func (s *Store) Load(ctx context.Context, id string) (store.Session, bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	v, err := s.rdb.HMGet(ctx, s.sessKey(id), "principal", "version", "init").Result()
	if err != nil {
		return store.Session{}, false, err
	}
	if v[0] == nil {
		return store.Session{}, false, nil
	}
	str := func(x any) string { s, _ := x.(string); return s }
	return store.Session{ID: id, Principal: str(v[0]), Version: str(v[1]), Init: []byte(str(v[2]))}, true, nil
}

// touchScript: -1 gone, 1 grace cancelled, 0 otherwise.
var touchScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return redis.call('ZREM', KEYS[3], ARGV[1])`)

func (s *Store) Touch(ctx context.Context, id string, now time.Time) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := touchScript.Run(ctx, s.rdb, []string{s.sessKey(id), s.actKey(), s.graceKey()}, id, ms(now)).Int()
	if err != nil {
		return false, err
	}
	if n < 0 {
		return false, store.ErrGone
	}
	return n == 1, nil
}

// removeScript deletes a session record once: DEL answers 1 to one caller.
var removeScript = redis.NewScript(`
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('PUBLISH', KEYS[4], ARGV[1])
return 1`)

func (s *Store) Remove(ctx context.Context, id string) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := removeScript.Run(ctx, s.rdb, []string{s.sessKey(id), s.actKey(), s.graceKey(), s.goneChan()}, id).Int()
	return n == 1, err
}

var incrScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('HINCRBY', KEYS[1], 'counter', 1)`)

func (s *Store) Increment(ctx context.Context, id string) (int64, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := incrScript.Run(ctx, s.rdb, []string{s.sessKey(id)}).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, store.ErrGone
	}
	return n, err
}

// graceScript puts every session idle since before ARGV[1] in grace until
// ARGV[2]; ZADD NX leaves a running grace period alone.
var graceScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
local started = {}
for _, id in ipairs(ids) do
  if redis.call('ZADD', KEYS[2], 'NX', ARGV[2], id) == 1 then table.insert(started, id) end
end
return started`)

func (s *Store) StartGrace(ctx context.Context, idleSince, deadline time.Time) ([]string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return graceScript.Run(ctx, s.rdb, []string{s.actKey(), s.graceKey()}, ms(idleSince), ms(deadline)).StringSlice()
}

// expireScript removes the sessions whose grace ended: in one script, so
// two replicas reaping at once split the ids between them, never share one.
var expireScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('DEL', ARGV[2] .. id)
  redis.call('PUBLISH', KEYS[3], id)
end
return ids`)

func (s *Store) Expire(ctx context.Context, now time.Time) ([]string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return expireScript.Run(ctx, s.rdb, []string{s.graceKey(), s.actKey(), s.goneChan()}, ms(now), s.p+"s:").StringSlice()
}

// Gone reports ids removed anywhere, the caller's own removals included.
func (s *Store) Gone(ctx context.Context) <-chan string {
	return pump(ctx, s.rdb.Subscribe(ctx, s.goneChan()), func(p string) (string, bool) { return p, true })
}

// pump delivers the messages of sub, converted, until ctx ends; then it
// closes sub and the channel.
func pump[T any](ctx context.Context, sub *redis.PubSub, conv func(payload string) (T, bool)) <-chan T {
	out := make(chan T, 256)
	go func() {
		defer close(out)
		defer sub.Close()
		ch := sub.Channel(redis.WithChannelSize(1024))
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-ch:
				if !ok {
					return
				}
				v, ok := conv(m.Payload)
				if !ok {
					continue
				}
				select {
				case out <- v:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

var listenScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'listeners', ARGV[1])`)

func (s *Store) Listen(ctx context.Context, id string, delta int) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return listenScript.Run(ctx, s.rdb, []string{s.sessKey(id)}, delta).Err()
}

func (s *Store) Listening(ctx context.Context, id string) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	n, err := s.hgetInt(ctx, s.sessKey(id), "listeners", 0)
	return n > 0, err
}

var deliveredScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'delivered') or '-1')
if cur == nil then return 0 end
if tonumber(ARGV[1]) > cur then redis.call('HSET', KEYS[1], 'delivered', ARGV[1]) end
return 1`)

func (s *Store) Delivered(ctx context.Context, id string, index int) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return deliveredScript.Run(ctx, s.rdb, []string{s.sessKey(id)}, index).Err()
}

func (s *Store) LastDelivered(ctx context.Context, id string) (int, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return s.hgetInt(ctx, s.sessKey(id), "delivered", -1)
}

// hgetInt reads an integer field, def if it or its key is missing.
func (s *Store) hgetInt(ctx context.Context, key, field string, def int) (int, error) {
	n, err := s.rdb.HGet(ctx, key, field).Int()
	if errors.Is(err, redis.Nil) {
		return def, nil
	}
	return n, err
}

// Follow subscribes to the stream's channel; Append publishes every event
// with data on it as "INDEX DATA".
func (s *Store) Follow(ctx context.Context, sessionID, streamID string) (<-chan eventstore.Event, error) {
	if err := s.health.guard(ctx); err != nil {
		return nil, err
	}
	sub := s.rdb.Subscribe(ctx, s.ev.channel(sessionID, streamID))
	rctx, cancel := bounded(ctx)
	defer cancel()
	if _, err := sub.Receive(rctx); err != nil {
		sub.Close()
		return nil, s.health.check(rctx, err)
	}
	return pump(ctx, sub, func(p string) (eventstore.Event, bool) {
		ix, data, _ := strings.Cut(p, " ")
		i, err := strconv.Atoi(ix)
		return eventstore.Event{Index: i, Data: []byte(data)}, err == nil
	}), nil
}
