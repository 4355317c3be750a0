package suites

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestNoGlobalAssertions: checks run side by side, so an assertion must
// go through its check's own T. Gomega's package-level Expect, Eventually
// and Consistently would fail no check (or the wrong one); this finds any
// call of them in the checks' code.
func TestNoGlobalAssertions(t *testing.T) {
	files, err := filepath.Glob("*/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no check files: %v", err)
	}
	banned := map[string]bool{"Expect": true, "Eventually": true, "Consistently": true, "Ω": true, "EventuallyWithOffset": true, "ExpectWithOffset": true}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if id, ok := call.Fun.(*ast.Ident); ok && banned[id.Name] {
					t.Errorf("%s: package-level %s; use the check's T (e.%s)", fset.Position(call.Pos()), id.Name, id.Name)
				}
			}
			return true
		})
	}
}
