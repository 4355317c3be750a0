package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// cliName is the name the tests give the command they run as a separate
// process: a test binary started under this name acts as mcp-conform.
const cliName = "mcp-conform"

// buildCLI returns mcp-conform built without the race detector, for the
// runs that start it as many separate processes (fixture runs, client
// runs, calls the tests kill). The package's tests share one. Without the
// detector, this test binary is that build, so it is linked under the
// command's name instead of built again. Under the detector it is built
// (honouring the environment's GOFLAGS).
func buildCLI(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mcp-conform-cli-"); built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, cliName)
		if !raceBuild {
			self, err := os.Executable()
			if err == nil {
				err = os.Symlink(self, built.exe)
			}
			built.err = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if out, err := exec.Command(goTool, "build", "-o", built.exe, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.exe
}

// built is the command buildCLI made once; TestMain removes its directory.
var built struct {
	once     sync.Once
	dir, exe string
	err      error
}
