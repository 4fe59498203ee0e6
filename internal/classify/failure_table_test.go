package classify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docTable reads the rows of the table under heading in docs/failures.md,
// each cell trimmed, code spans unwrapped and `\|` unescaped.
func docTable(t *testing.T, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "failures.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("docs/failures.md has no section %q", heading)
	}
	var rows [][]string
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		line = strings.ReplaceAll(strings.Trim(line, "| "), `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(line, " | ") {
			c = strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|")
			cells = append(cells, strings.TrimSuffix(strings.TrimPrefix(c, "`"), "`"))
		}
		rows = append(rows, cells)
	}
	return rows[1:] // the header
}

// TestFailureTableDoc holds docs/failures.md's tables to the code's: the
// same error types and phrases, each with its class and its source.
func TestFailureTableDoc(t *testing.T) {
	var want, got [][]string
	for _, r := range failureTypes {
		c := string(r.Class)
		if c == "" {
			c = "—"
		}
		want = append(want, []string{r.Name, c, r.Source})
	}
	got = docTable(t, "Error types")
	if !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("docs/failures.md error types differ from failureTypes:\n doc  %q\n code %q", got, want)
	}
	want = nil
	for _, p := range failurePhrases {
		want = append(want, []string{string(p.Class), p.Pattern, p.Source})
	}
	got = docTable(t, "Phrases")
	if !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("docs/failures.md phrases differ from failurePhrases:\n doc  %q\n code %q", got, want)
	}
}

// TestFailureTypesAgree checks that a type named twice gives one class,
// and that every row has a source.
func TestFailureTypesAgree(t *testing.T) {
	seen := map[string]Class{}
	for _, r := range failureTypes {
		if r.Source == "" {
			t.Errorf("%s: no source", r.Name)
		}
		if c, dup := seen[r.Name]; dup {
			t.Errorf("%s named twice (%s, %s)", r.Name, c, r.Class)
		}
		seen[r.Name] = r.Class
	}
	for _, p := range failurePhrases {
		if p.Source == "" {
			t.Errorf("%s: no source", p.Pattern)
		}
	}
}
