package redisstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/jobs"
)

// jobMirror keeps jobs' snapshots and resume tokens in Redis, each key
// expiring with what it stands for, so that job_get and a resume token
// work on every replica.
type jobMirror struct{ s *Store }

// Jobs implements store.Store.
func (s *Store) Jobs() jobs.Mirror { return jobMirror{s} }

type savedJob struct {
	Principal string        `json:"principal"`
	Snapshot  jobs.Snapshot `json:"snapshot"`
}

type savedToken struct {
	Principal string `json:"principal"`
	Conv      string `json:"conversation_id"`
	Turn      int    `json:"turn"`
}

func (m jobMirror) save(key string, v any, ttl time.Duration) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	ctx, cancel := bounded(context.Background())
	defer cancel()
	m.s.rdb.Set(ctx, key, data, ttl)
}

func (m jobMirror) load(key string, v any) bool {
	ctx, cancel := bounded(context.Background())
	defer cancel()
	data, err := m.s.rdb.Get(ctx, key).Bytes()
	return err == nil && json.Unmarshal(data, v) == nil
}

func (m jobMirror) SaveJob(principal string, snap jobs.Snapshot, ttl time.Duration) {
	m.save(m.s.p+"job:"+snap.JobID, savedJob{Principal: principal, Snapshot: snap}, ttl)
}

func (m jobMirror) LoadJob(id string) (string, jobs.Snapshot, bool) {
	var j savedJob
	ok := m.load(m.s.p+"job:"+id, &j)
	return j.Principal, j.Snapshot, ok
}

func (m jobMirror) SaveToken(token, principal, conv string, turn int, ttl time.Duration) {
	m.save(m.s.p+"tok:"+token, savedToken{Principal: principal, Conv: conv, Turn: turn}, ttl)
}

func (m jobMirror) LoadToken(token string) (string, string, int, bool) {
	var t savedToken
	ok := m.load(m.s.p+"tok:"+token, &t)
	return t.Principal, t.Conv, t.Turn, ok
}
