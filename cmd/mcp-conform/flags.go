package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-conform/mcp-conform/internal/cli"
)

// stringList is a repeatable string flag.
type stringList = cli.StringList

// parallelFlag checks --parallel: the harness takes 0 to mean its default,
// but on the command line 0 is a mistake.
func parallelFlag(n int) error {
	if n < 1 {
		return usageError(fmt.Errorf("--parallel must be 1 or more, got %d", n))
	}
	return nil
}

// defaultSuggestion is where 'server' writes a suggested target profile;
// when reports/ does not exist it says so instead.
const defaultSuggestion = "reports/profile.suggested.yaml"

// explicitDir checks that the directory of a file flag the user set
// exists, so a typo does not cost a whole run.
func explicitDir(fs *flag.FlagSet, name, path string) error {
	if !flagSet(fs, name) || path == "" {
		return nil
	}
	if dir := filepath.Dir(path); dir != "." {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usageError(fmt.Errorf("--%s: directory %s does not exist", name, dir))
		}
	}
	return nil
}
