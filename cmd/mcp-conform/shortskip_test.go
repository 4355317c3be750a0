package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortSkipsRunInE2E: make test runs every package with -short, then
// the tests named TestE2E… without it (Makefile, E2E_RUN), then those
// named TestBrowser… (test-browser). A test that skips under -short and is
// named otherwise would run nowhere.
func TestShortSkipsRunInE2E(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "TestE2E") || strings.HasPrefix(fn.Name.Name, "TestBrowser") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if skipsShort(call) {
					t.Errorf("%s: %s skips under -short but is not named TestE2E… or TestBrowser…: make test never runs it", fset.Position(fn.Pos()), fn.Name.Name)
					return false
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skipsShort reports a call of testing.Short() or of skipShort.
func skipsShort(call *ast.CallExpr) bool {
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "testing" && f.Sel.Name == "Short"
	case *ast.Ident:
		return f.Name == "skipShort"
	}
	return false
}
