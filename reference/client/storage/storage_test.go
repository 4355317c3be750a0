package storage_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// writerEnv makes the test binary act as a writer process for TestE2EKillAnyMoment.
const writerEnv = "MCP_CONFORM_STORAGE_WRITER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(writerEnv); dir != "" {
		writeForever(dir)
		return
	}
	os.Exit(m.Run())
}

// writeForever sets "n" to 1, 2, 3, ... with a growing payload, printing
// each n once Set has returned, until it is killed.
func writeForever(dir string) {
	f, err := storage.Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for n := 1; ; n++ {
		if err := f.Set("n", strconv.Itoa(n)); err != nil {
			fmt.Println("set:", err)
			os.Exit(1)
		}
		if err := f.Set("payload", strings.Repeat("x", n%4096)); err != nil {
			fmt.Println("set:", err)
			os.Exit(1)
		}
		fmt.Println(n)
	}
}

// conformance runs the Web Storage semantics against any implementation.
func conformance(t *testing.T, s storage.Storage) {
	t.Helper()
	if _, ok := s.Get("a"); ok {
		t.Fatal("fresh storage has a")
	}
	must(t, s.Set("a", "1"))
	must(t, s.Set("b", ""))
	must(t, s.Set("a", "2"))
	if v, ok := s.Get("a"); !ok || v != "2" {
		t.Fatalf("a = %q %v", v, ok)
	}
	if v, ok := s.Get("b"); !ok || v != "" {
		t.Fatalf("empty value: %q %v", v, ok)
	}
	must(t, s.Remove("a"))
	must(t, s.Remove("never-set"))
	if _, ok := s.Get("a"); ok {
		t.Fatal("a survived Remove")
	}
	must(t, s.Set("c", "3"))
	must(t, s.Clear())
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := s.Get(k); ok {
			t.Fatalf("%s survived Clear", k)
		}
	}
}

func TestMemory(t *testing.T) { conformance(t, storage.NewMemory()) }

func TestFile(t *testing.T) {
	f := open(t, t.TempDir())
	conformance(t, f)
}

// TestFileSurvivesReopen: values, unicode and odd keys included, come back
// after the process lets go of the directory.
func TestFileSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	want := map[string]string{"mcp_session_id": "ABC", "k/with:odd chars": "välue\n\"quoted\"", "gone": "x"}
	for k, v := range want {
		must(t, f.Set(k, v))
	}
	must(t, f.Remove("gone"))
	delete(want, "gone")
	must(t, f.Close())
	g := open(t, dir)
	for k, v := range want {
		if got, ok := g.Get(k); !ok || got != v {
			t.Errorf("%q = %q %v, want %q", k, got, ok, v)
		}
	}
	if _, ok := g.Get("gone"); ok {
		t.Error("removed key came back")
	}
}

// TestAtomicReplace: a reader looking at the directory while values change
// only ever sees a complete file, and no temporary files are left behind.
func TestAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	must(t, f.Set("n", "0"))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(filepath.Join(dir, "state.json"))
			if err == nil {
				var v map[string]any
				err = json.Unmarshal(data, &v)
			}
			if err != nil {
				bad = err
				return
			}
		}
	})
	for i := range 300 {
		must(t, f.Set("n", strconv.Itoa(i)))
		must(t, f.Set("payload", strings.Repeat("y", i*37)))
	}
	close(stop)
	wg.Wait()
	if bad != nil {
		t.Fatalf("a reader saw an incomplete file: %v", bad)
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, ".state-*")); len(temps) > 0 {
		t.Fatalf("temporary files left: %v", temps)
	}
}

// TestE2EKillAnyMoment kills a writer process (SIGKILL) at arbitrary points of
// its write loop: the directory always opens, and holds a value at least as
// new as the last one the writer reported durable.
func TestE2EKillAnyMoment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	dir := t.TempDir()
	for round, after := range []int{1, 7, 40, 150} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		last := 0
		for i := 0; i < after && sc.Scan(); i++ {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("writer: %s", sc.Text())
			}
			last = n
		}
		cmd.Process.Kill()
		cmd.Wait()
		if last != after {
			t.Fatalf("round %d: writer reported %d values, want %d", round, last, after)
		}
		f, err := storage.Open(dir)
		if err != nil {
			t.Fatalf("round %d: open after kill: %v", round, err)
		}
		v, _ := f.Get("n")
		if n, err := strconv.Atoi(v); err != nil || n < last {
			t.Fatalf("round %d: n = %q after the writer reported %d durable", round, v, last)
		}
		// The next round's writer starts over from 1 on the same directory.
		must(t, f.Clear())
		must(t, f.Close())
	}
}

// TestCorruptFile: a file that cannot be parsed is a clear error naming it,
// never silently empty state.
func TestCorruptFile(t *testing.T) {
	for name, content := range map[string]string{
		"truncated":    `{"format":"mcp-conform-state/1","items":{"a":"`,
		"not json":     "\x00\x01garbage",
		"other format": `{"format":"something-else/9","items":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			must(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := storage.Open(dir)
			if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v, want ErrCorrupt naming %s", err, path)
			}
			// The file is left for the user to inspect.
			if data, _ := os.ReadFile(path); string(data) != content {
				t.Fatal("corrupt file was changed")
			}
		})
	}
}

// TestUnwritable: a directory that cannot be created or written is an
// error at Open or at Set, and a failed Set changes nothing.
func TestUnwritable(t *testing.T) {
	t.Run("under a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain")
		must(t, os.WriteFile(file, nil, 0o600))
		if _, err := storage.Open(filepath.Join(file, "state")); err == nil || !strings.Contains(err.Error(), "state directory") {
			t.Fatalf("Open under a regular file: %v", err)
		}
	})
	t.Run("read-only directory", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes to read-only directories")
		}
		dir := t.TempDir()
		must(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		if _, err := storage.Open(dir); err == nil {
			t.Fatal("Open of a read-only directory succeeded")
		}
	})
	t.Run("directory gone after Open", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "state")
		f := open(t, dir)
		must(t, f.Set("kept", "1"))
		must(t, os.RemoveAll(dir))
		must(t, os.WriteFile(dir, nil, 0o600)) // now a file: nothing can be written in it
		err := f.Set("kept", "2")
		if err == nil || !strings.Contains(err.Error(), "storage: writing") {
			t.Fatalf("Set into a vanished directory: %v", err)
		}
		if v, _ := f.Get("kept"); v != "1" {
			t.Fatalf("failed Set changed memory: kept = %q", v)
		}
	})
}

// TestLocked: a second opener of the same directory is refused until the
// first closes it.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	if _, err := storage.Open(dir); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	must(t, f.Close())
	g, err := storage.Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	g.Close()
}

func open(t *testing.T, dir string) *storage.File {
	t.Helper()
	f, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
