package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Names inside the state directory.
const (
	stateFile  = "state.json"
	lockFile   = "lock"
	tempPrefix = ".state-"
	tempSuffix = ".tmp"
	// fileFormat tags the file so that a future layout is told apart from corruption.
	fileFormat = "mcp-conform-state/1"
)

// ErrCorrupt reports a state file that cannot be read back.
var ErrCorrupt = errors.New("storage: state file is corrupt")

// ErrLocked reports a state directory held by another process.
var ErrLocked = errors.New("storage: state directory is in use by another process")

// File is a Storage kept in one JSON file in a state directory. Every
// change rewrites the whole file through a temporary file in the same
// directory: written, fsynced, renamed over the old one, then the directory
// fsynced. A kill at any moment therefore leaves either the old or the new
// file, never a mix. One process at a time may hold the directory.
type File struct {
	dir  string
	path string
	lock *os.File

	mu     sync.Mutex
	items  map[string]string
	closed bool
}

type fileContents struct {
	Format string            `json:"format"`
	Items  map[string]string `json:"items"`
}

// Open opens (creating if needed) the state directory dir and loads its
// file. It fails with ErrCorrupt if the file cannot be parsed, ErrLocked if
// another process holds the directory, and a plain error if the directory
// cannot be created or written.
func Open(dir string) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("storage: creating state directory: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, err
	}
	f := &File{dir: dir, path: filepath.Join(dir, stateFile), lock: lock}
	if err := f.load(); err != nil {
		lock.Close()
		return nil, err
	}
	// Leftovers of a process killed mid-write; the rename never happened.
	if olds, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"+tempSuffix)); len(olds) > 0 {
		for _, p := range olds {
			os.Remove(p)
		}
	}
	// Find an unwritable directory now rather than at the first Set, which
	// may come in the middle of a call.
	if err := f.probeWritable(); err != nil {
		lock.Close()
		return nil, err
	}
	return f, nil
}

func (f *File) load() error {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		f.items = map[string]string{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: reading %s: %w", f.path, err)
	}
	var c fileContents
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: %s: %v (move it away to start with empty state)", ErrCorrupt, f.path, err)
	}
	if c.Format != fileFormat {
		return fmt.Errorf("%w: %s: format %q, want %q (move it away to start with empty state)", ErrCorrupt, f.path, c.Format, fileFormat)
	}
	if c.Items == nil {
		c.Items = map[string]string{}
	}
	f.items = c.Items
	return nil
}

func (f *File) probeWritable() error {
	t, err := os.CreateTemp(f.dir, tempPrefix+"*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("storage: state directory %s is not writable: %w", f.dir, err)
	}
	t.Close()
	return os.Remove(t.Name())
}

// Dir returns the state directory.
func (f *File) Dir() string { return f.dir }

func (f *File) Get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.items[key]
	return v, ok
}

func (f *File) Set(key, value string) error {
	return f.update(func(m map[string]string) bool {
		if old, ok := m[key]; ok && old == value {
			return false
		}
		m[key] = value
		return true
	})
}

func (f *File) Remove(key string) error {
	return f.update(func(m map[string]string) bool {
		if _, ok := m[key]; !ok {
			return false
		}
		delete(m, key)
		return true
	})
}

func (f *File) Clear() error {
	return f.update(func(m map[string]string) bool {
		if len(m) == 0 {
			return false
		}
		clear(m)
		return true
	})
}

// Snapshot returns a copy of every item.
func (f *File) Snapshot() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.items)
}

// Close releases the directory for other processes. The data is already
// on disk; Close writes nothing.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	return f.lock.Close()
}

// update applies change to a copy of the items and writes it; memory is
// only changed once the disk is, so a failed write leaves both as they were.
func (f *File) update(change func(map[string]string) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("storage: closed")
	}
	next := maps.Clone(f.items)
	if !change(next) {
		return nil
	}
	if err := f.write(next); err != nil {
		return err
	}
	f.items = next
	return nil
}

func (f *File) write(items map[string]string) (err error) {
	data, err := json.MarshalIndent(fileContents{Format: fileFormat, Items: items}, "", "  ")
	if err != nil {
		return err
	}
	t, err := os.CreateTemp(f.dir, tempPrefix+"*"+tempSuffix)
	if err != nil {
		return fmt.Errorf("storage: writing state in %s: %w", f.dir, err)
	}
	defer func() {
		if err != nil {
			t.Close()
			os.Remove(t.Name())
			err = fmt.Errorf("storage: writing %s: %w", f.path, err)
		}
	}()
	if _, err = t.Write(append(data, '\n')); err != nil {
		return err
	}
	if err = t.Sync(); err != nil {
		return err
	}
	if err = t.Close(); err != nil {
		return err
	}
	if err = os.Rename(t.Name(), f.path); err != nil {
		return err
	}
	// The rename is durable only once the directory entry is.
	return syncDir(f.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some file systems cannot fsync a directory; the rename stands anyway.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
