package clientchecks

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// printer is a client under test that runs script (sh) once per check; the
// check keeps the number of bytes of the lines the harness retained.
func printer(t *testing.T, script string) (kit.Check, *int) {
	dir := t.TempDir()
	path := filepath.Join(dir, "client.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cl := &Client{Command: path, StateRoot: dir}
	kept := new(int)
	return kit.Check{Entry: persistEntry(), Need: time.Second, Run: func(t *kit.T) {
		e := cl.newEnv(t, def{Entry: persistEntry()})
		cr := e.start(actionRun(contract.ActionList))
		select {
		case <-cr.done:
		case <-t.Context().Done():
			t.Fail("the run did not end")
		}
		lines, _, _ := cr.snapshot()
		for _, l := range lines {
			*kept += len(l.Raw)
		}
	}}, kept
}

// allocated is what the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeLineIsBounded: a client that prints a 50 MB line costs the
// harness a bounded amount of memory, and the log says the line was cut.
func TestHugeLineIsBounded(t *testing.T) {
	c, _ := printer(t, "head -c 52428800 /dev/zero | tr '\\0' x; echo")
	var r kit.Result
	alloc := allocated(func() { r = kit.Execute(context.Background(), c, 60*time.Second) })
	t.Logf("allocated %.1f MB while the client printed a 50 MB line", float64(alloc)/(1<<20))
	if alloc > 16<<20 {
		t.Errorf("the harness allocated %d MB for a client's 50 MB line; want it bounded (under 16 MB)", alloc>>20)
	}
	if want := "a line of 52428800 bytes, cut to its first 65536"; !strings.Contains(r.Exchange, want) {
		t.Errorf("the log does not say %q:\n%s", want, kit.Clip(r.Exchange, 2000))
	}
}

// TestRunOutputIsBounded: of a client that prints 20 MB of contract lines,
// the harness keeps a few MiB, and the log says how much it did not keep.
func TestRunOutputIsBounded(t *testing.T) {
	c, kept := printer(t, `yes '{"type":"notification","method":"notifications/message"}' | head -n 350000`)
	r := kit.Execute(context.Background(), c, 60*time.Second)
	if *kept > maxRunOutput+maxLine {
		t.Errorf("the harness kept %d bytes of the run's lines; want at most %d", *kept, maxRunOutput+maxLine)
	}
	if *kept < maxRunOutput/2 {
		t.Errorf("the harness kept only %d bytes of the run's lines; want about %d", *kept, maxRunOutput)
	}
	if !strings.Contains(r.Exchange, "more lines") || !strings.Contains(r.Exchange, "not kept: the run printed more than 4 MiB") {
		t.Errorf("the log does not say what was not kept:\n%s", kit.Clip(r.Exchange, 2000))
	}
}
