//go:build !linux && !windows

package proctree

import "syscall"

// Without /proc and a subreaper, a tree is its process group.

func becomeSubreaper() {}

type proc struct {
	pid, ppid, pgid int
	zombie          bool
}

func scan() []proc { return nil }

func stat(int) (proc, bool) { return proc{}, false }

func hasEnv(int, string) bool { return false }

// Alive reports whether pid is a running process (signal 0 reaches it).
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// awaitExit returns false at once: without waitid's WNOWAIT the command
// is reaped by Wait alone, and the tree keeps addressing its group.
func awaitExit(int) bool { return false }
