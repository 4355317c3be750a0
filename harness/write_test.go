package harness

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFile: a link at the path is never written through, whether it
// dangles or not and whatever replace says; an existing file is replaced
// only with replace, and then takes the mode asked for; no temporary file
// stays behind.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(elsewhere, []byte("E"), 0o644); err != nil {
		t.Fatal(err)
	}
	dangling, pointing := filepath.Join(dir, "dangling"), filepath.Join(dir, "pointing")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, pointing); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dangling, pointing} {
		for _, replace := range []bool{false, true} {
			if err := WriteFile(path, []byte("X"), 0o644, replace); !errors.Is(err, ErrSymlink) {
				t.Errorf("WriteFile(%s, replace %v): %v, want ErrSymlink", path, replace, err)
			}
		}
	}
	if data, _ := os.ReadFile(elsewhere); string(data) != "E" {
		t.Errorf("written through a link: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("written through a dangling link")
	}

	path := filepath.Join(dir, "profile.yaml")
	if err := WriteFile(path, []byte("old"), 0o644, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o600, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("over an existing file without replace: %v, want fs.ErrExist", err)
	}
	if err := WriteFile(path, []byte("new"), 0o600, true); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if data, _ := os.ReadFile(path); err != nil || string(data) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced: %q, mode %v (%v); want \"new\", 0600", data, st.Mode().Perm(), err)
	}
	if err := WriteFile(dir, []byte("X"), 0o644, true); err == nil {
		t.Error("replaced a directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%s holds %v, want the two links and the file", dir, entries)
	}
}
