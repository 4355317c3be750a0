package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/testparallel"
)

// selfEnv makes the test binary act as the mcp-conform command, so tests
// can run it as a separate process (the suites run once per process).
const selfEnv = "MCP_CONFORM_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(selfEnv) == "1" || filepath.Base(os.Args[0]) == cliName {
		// The processes it starts as itself (the reference client) act as
		// the command too.
		os.Setenv(selfEnv, "1")
		main()
	}
	// Its parallel tests mostly wait on the processes they start (harness
	// runs against fixtures, the reference, Redis, Chromium); the fixture
	// runs themselves are bounded by fixturePool.
	testparallel.PerCore(2)
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// skipShort skips an end-to-end test under -short (make test's race
// pass), saying what it would have run.
func skipShort(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
}

// self returns a command that runs mcp-conform with args.
func self(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), selfEnv+"=1")
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runSelf runs mcp-conform with args to completion within d and returns its
// output and exit code.
func runSelf(t *testing.T, d time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runSelfEnv(t, d, nil, args...)
}

// runSelfEnv is runSelf with env added to the environment.
func runSelfEnv(t *testing.T, d time.Duration, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := self(t, ctx, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("mcp-conform %v: %v\n%s", args, err, errOut.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("mcp-conform %v: no exit within %v\nstdout:\n%s\nstderr:\n%s", args, d, out.String(), errOut.String())
	}
	return out.String(), errOut.String(), code
}
