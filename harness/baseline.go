package harness

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// LoadExpectedFailures reads a baseline file: one check ID per line, with
// '#' starting a comment (the reason the target fails it). An entry
// ID@revision (TASK-MCP-NAME@2026-07-28) expects the failure at that
// revision only; a bare ID at every revision the run checks.
func LoadExpectedFailures(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &SetupError{fmt.Errorf("--expected-failures: %w", err)}
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		switch len(fields) {
		case 0:
		case 1:
			out[fields[0]] = true
		default:
			return nil, setupErr("--expected-failures %s:%d: want one check ID (or ID@revision) per line, got %q", path, n, strings.TrimSpace(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &SetupError{fmt.Errorf("--expected-failures: %w", err)}
	}
	return out, nil
}
