package harness

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is the error for a path that is a symbolic link: a file the
// harness writes never goes where a link points, which a link committed
// to a repository, even a dangling one, could put anywhere.
var ErrSymlink = errors.New("is a symbolic link: not written through it")

// WriteFile writes data to path with mode perm, never through a symbolic
// link at path. Without replace it creates the file exclusively, so that
// anything at path (fs.ErrExist) stays as it is; with replace it writes a
// new file beside path and renames it over a regular file there, so that
// the mode is perm even where the old file's was wider.
func WriteFile(path string, data []byte, perm fs.FileMode, replace bool) error {
	st, err := os.Lstat(path)
	switch {
	case err == nil && st.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "write", Path: path, Err: ErrSymlink}
	case err == nil && !replace:
		return &fs.PathError{Op: "write", Path: path, Err: fs.ErrExist}
	case err == nil && !st.Mode().IsRegular():
		return &fs.PathError{Op: "write", Path: path, Err: errors.New("is not a regular file")}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if !replace {
		// O_EXCL fails on a link made since, dangling or not.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		return finish(f, data, path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := finish(f, data, f.Name()); err != nil {
		return err
	}
	// A rename replaces a link made since; it does not follow it.
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// finish writes data to f and closes it, removing name if either fails.
func finish(f *os.File, data []byte, name string) error {
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
