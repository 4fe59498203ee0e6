package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// root returns the folder of the repository.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// DocTable returns the body rows of the first table under the heading (as
// "## Agents") of the repository's page (as "README.md" or
// "docs/design.md"), each row as its trimmed cells, for tests that check a
// page against the code it describes.
func DocTable(t *testing.T, page, heading string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(), filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", page, heading)
	}
	var rows [][]string
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("%s's table under %q has %d rows", page, heading, len(rows))
	}
	return rows[2:] // the header and its rule
}
