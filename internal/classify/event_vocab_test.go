package classify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestVocabulary: every event kind and failure class declared in event.go
// is listed (Kinds, Classes) and has its own words, so no view falls back
// to a name.
func TestVocabulary(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if ok && v.Type != nil {
			if id, ok := v.Type.(*ast.Ident); ok && (id.Name == "Kind" || id.Name == "Class") {
				for _, val := range v.Values {
					if lit, ok := val.(*ast.BasicLit); ok {
						declared[id.Name] = append(declared[id.Name], strings.Trim(lit.Value, `"`))
					}
				}
			}
		}
		return true
	})
	for _, k := range declared["Kind"] {
		if !slices.Contains(Kinds, Kind(k)) || kindWords[Kind(k)] == "" {
			t.Errorf("kind %q is not in Kinds with its words", k)
		}
	}
	for _, c := range declared["Class"] {
		if !slices.Contains(Classes, Class(c)) || classWords[Class(c)] == "" {
			t.Errorf("class %q is not in Classes with its words", c)
		}
	}
	if len(declared["Kind"]) != len(Kinds) || len(declared["Class"]) != len(Classes) || len(kindWords) != len(Kinds) || len(classWords) != len(Classes) {
		t.Errorf("%d kinds declared, %d listed, %d with words; %d classes declared, %d listed, %d with words",
			len(declared["Kind"]), len(Kinds), len(kindWords), len(declared["Class"]), len(Classes), len(classWords))
	}
}
