package testenv

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docs/design.md's package table names every package under cmd/ and
// internal/, and only those.
func TestDesignListsEveryPackage(t *testing.T) {
	var listed []string
	for _, row := range DocTable(t, "docs/design.md", "## Packages") {
		listed = append(listed, strings.Trim(row[0], "`"))
	}
	var packages []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root(), top), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".go") {
				rel, err := filepath.Rel(root(), filepath.Dir(path))
				if err != nil {
					return err
				}
				packages = append(packages, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(packages)
	packages = slices.Compact(packages) // one entry per file so far
	for _, p := range packages {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s has no row in docs/design.md", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(packages, p) {
			t.Errorf("docs/design.md lists %s, which is no package", p)
		}
	}
	if sorted := slices.Sorted(slices.Values(listed)); len(slices.Compact(sorted)) != len(listed) {
		t.Errorf("docs/design.md lists a package twice: %v", listed)
	}
}
