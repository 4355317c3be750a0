package tasks

import (
	"encoding/json"
	"time"
)

// RelatedTaskMeta is the _meta key that ties a message to its task.
const RelatedTaskMeta = "io.modelcontextprotocol/related-task"

// Task is the 2025-11-25 wire form of a task.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL and PollInterval are milliseconds.
	TTL          int64 `json:"ttl"`
	PollInterval int64 `json:"pollInterval,omitempty"`
}

// Wire is s in the 2025-11-25 wire form.
func (s Snapshot) Wire() Task {
	return Task{
		TaskID: s.ID, Status: s.Status, StatusMessage: s.StatusMessage,
		CreatedAt:     s.CreatedAt.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: s.LastUpdatedAt.UTC().Format(time.RFC3339Nano),
		TTL:           s.TTL.Milliseconds(), PollInterval: s.PollInterval.Milliseconds(),
	}
}

// WithRelatedTask returns result (a JSON object) with the related-task
// _meta naming id added, keeping any _meta it has.
func WithRelatedTask(result json.RawMessage, id string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(result, &m); err != nil {
		return nil, err
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
	}
	rel, _ := json.Marshal(map[string]string{"taskId": id})
	meta[RelatedTaskMeta] = rel
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	m["_meta"] = b
	return json.Marshal(m)
}
