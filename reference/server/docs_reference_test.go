package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every section of docs/resilience.md ends with an "**In the reference**:"
// line naming the files and functions that implement its rule, so that a
// server author reading a rule finds the code. TestDocsReference keeps that
// map from going stale: a function renamed, moved or deleted, a file gone,
// or a section added without its line fails here, not in a reader's hands.

// refPair is one `[path](../path) (`Name`, `Name`)` entry of such a line.
var refPair = regexp.MustCompile("\\[([^\\]]+)\\]\\(\\.\\./([^)]+)\\) \\(((?:`[^`]+`(?:, )?)+)\\)")

// backticked is one name of an entry.
var backticked = regexp.MustCompile("`([^`]+)`")

// sectionsWithoutCode are the sections that state no behaviour of their own.
var sectionsWithoutCode = map[string]bool{
	"Timings": true, // defines the terms; the reaper implements them
}

func TestDocsReference(t *testing.T) {
	const root = "../.." // the repository, from this package
	data, err := os.ReadFile(filepath.Join(root, "docs", "resilience.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	lines := map[string]int{} // section -> its "In the reference" lines
	decls := map[string]map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(h)
			sections = append(sections, section)
			continue
		}
		rest, ok := strings.CutPrefix(line, "**In the reference**:")
		if !ok {
			continue
		}
		lines[section]++
		pairs := refPair.FindAllStringSubmatch(rest, -1)
		if len(pairs) == 0 || len(pairs) != strings.Count(rest, "](../") {
			t.Errorf("%q: want entries of the form [path](../path) (`Name`, ...), got %q", section, rest)
		}
		for _, p := range pairs {
			label, path := p[1], p[2]
			if label != path || !filepath.IsLocal(path) {
				t.Errorf("%q: link [%s](../%s): the text must be the path, inside the repository", section, label, path)
				continue
			}
			if decls[path] == nil {
				if decls[path], err = declared(filepath.Join(root, path)); err != nil {
					t.Errorf("%q: %v", section, err)
					continue
				}
			}
			for _, n := range backticked.FindAllStringSubmatch(p[3], -1) {
				if !decls[path][n[1]] {
					t.Errorf("%q: %s declares no function or method %s", section, path, n[1])
				}
			}
		}
	}
	for _, s := range sections {
		want := 1
		if sectionsWithoutCode[s] {
			want = 0
		}
		if lines[s] != want {
			t.Errorf("section %q has %d \"**In the reference**:\" lines, want %d", s, lines[s], want)
		}
	}
	if lines[""] > 0 {
		t.Errorf("an \"**In the reference**:\" line before the first section")
	}
	for s := range sectionsWithoutCode {
		if !slices.Contains(sections, s) {
			t.Errorf("sectionsWithoutCode names %q, which is no section of resilience.md", s)
		}
	}
}

// declared returns the functions and methods the Go file at path declares,
// each as name and, for a method, also as Type.name.
func declared(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		names[fn.Name.Name] = true
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			names[receiver(fn.Recv.List[0].Type)+"."+fn.Name.Name] = true
		}
	}
	return names, nil
}

// receiver is the type name of a method's receiver: T of T, *T, T[P].
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
