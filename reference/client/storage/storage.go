// Package storage is the reference client's localStorage: a small string
// key-value store shaped like Web Storage (getItem, setItem, removeItem,
// clear). File keeps it in a state directory so that it survives the
// process being killed at any moment; Memory keeps it in the process.
package storage

import (
	"maps"
	"sync"
)

// Storage is the Web Storage interface. Get never fails: implementations
// that read from disk do so when they are opened, so a corrupt file is
// reported once, up front, rather than at every read.
type Storage interface {
	// Get returns the value of key and whether it is set.
	Get(key string) (string, bool)
	// Set stores value under key; when it returns nil the value is durable.
	Set(key, value string) error
	// Remove deletes key; removing an absent key is not an error.
	Remove(key string) error
	// Clear deletes every key.
	Clear() error
}

// Memory is a Storage that lives only as long as the process.
type Memory struct {
	mu    sync.Mutex
	items map[string]string
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{items: map[string]string{}} }

func (m *Memory) Get(key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[key]
	return v, ok
}

func (m *Memory) Set(key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items[key] = value
	return nil
}

func (m *Memory) Remove(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, key)
	return nil
}

func (m *Memory) Clear() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.items)
	return nil
}

// Snapshot returns a copy of every item, for tests and inspection.
func (m *Memory) Snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.items)
}
