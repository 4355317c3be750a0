//go:build !unix

package storage

import (
	"fmt"
	"os"
)

// lockDir only opens the lock file where flock is not available; running
// two clients on one directory is then the user's responsibility.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("storage: state directory is not usable: %w", err)
	}
	return f, nil
}
