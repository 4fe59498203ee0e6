package classify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readmeAgents returns the rows of the README's agent table (under
// "## Agents"), each as its cells.
func readmeAgents(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Agents\n")
	if !ok {
		t.Fatal(`README.md has no "## Agents" section`)
	}
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
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
	if len(rows) < 2 {
		t.Fatalf("README.md's agent table has %d rows", len(rows))
	}
	return rows[2:] // the header and its rule
}

// The README's agent table has one row per agent of the registry, named by
// its title, naming its default folder and the variable that moves it.
func TestReadmeNamesEveryAgent(t *testing.T) {
	rows := readmeAgents(t)
	var titles, want []string
	for _, r := range rows {
		titles = append(titles, r[0])
	}
	for _, a := range Agents() {
		want = append(want, a.Title)
		i := slices.Index(titles, a.Title)
		if i < 0 {
			continue
		}
		row := strings.Join(rows[i][1:], " ")
		if !strings.Contains(row, "~/"+a.Home.Dir+"/") {
			t.Errorf("README row of %s does not name ~/%s/", a.Title, a.Home.Dir)
		}
		if a.Home.Env != "" && !strings.Contains(row, "$"+a.Home.Env) {
			t.Errorf("README row of %s does not name $%s", a.Title, a.Home.Env)
		}
	}
	slices.Sort(titles)
	slices.Sort(want)
	if !slices.Equal(titles, want) {
		t.Errorf("README agents %q, registry %q", titles, want)
	}
}
