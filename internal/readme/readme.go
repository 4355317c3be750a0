// Package readme keeps generated blocks of the documentation in step with the code:
// a block sits between a begin and an end marker, tests compare it with
// what the code makes, and -update rewrites it.
package readme

import (
	"bytes"
	"fmt"
	"os"
)

// Block is a generated part of a file.
type Block struct {
	Path       string
	Begin, End string // marker lines, each ending in a newline
}

// Sync compares the block with want. When it differs it rewrites the
// file if update is set, and returns an error saying how to update it
// otherwise.
func (b Block) Sync(want string, update bool, how string) error {
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return err
	}
	i := bytes.Index(data, []byte(b.Begin))
	j := bytes.Index(data, []byte(b.End))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no block between %q and %q", b.Path, b.Begin, b.End)
	}
	if string(data[i+len(b.Begin):j]) == want {
		return nil
	}
	if !update {
		return fmt.Errorf("the block %q of %s is stale; run %s\nwant:\n%s", b.Begin, b.Path, how, want)
	}
	out := append(append(append([]byte(nil), data[:i+len(b.Begin)]...), want...), data[j:]...)
	return os.WriteFile(b.Path, out, 0o644)
}
