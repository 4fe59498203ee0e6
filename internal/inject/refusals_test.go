package inject

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRefusalsListsEveryReason: every exported Err… of this package but
// the ErrHeld mark is in Refusals, so the daemon's table of told reasons
// (held to Refusals by its own test) cannot miss one.
func TestRefusalsListsEveryReason(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range Refusals {
		listed[r.Error()] = true
	}
	fset := token.NewFileSet()
	for _, file := range slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") }) {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			v, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range v.Names {
				if !strings.HasPrefix(name.Name, "Err") || !name.IsExported() || name.Name == "ErrHeld" || i >= len(v.Values) {
					continue
				}
				call, ok := v.Values[i].(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if ok && !listed[strings.Trim(lit.Value, `"`)] {
					t.Errorf("%s (%s) is not in Refusals", name.Name, fset.Position(name.Pos()))
				}
			}
			return true
		})
	}
}
