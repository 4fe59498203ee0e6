package classify

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"nudge/internal/testenv"
)

// The README's agent table has one row per agent of the registry, named by
// its title, naming its default folder and the variable that moves it.
func TestReadmeNamesEveryAgent(t *testing.T) {
	rows := testenv.DocTable(t, "README.md", "## Agents")
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

// Every registry entry has what the rest of nudge reads from it.
func TestRegistryEntriesAreComplete(t *testing.T) {
	key := regexp.MustCompile(`^[a-z][a-z_]*$`)
	for _, a := range Agents() {
		switch {
		case !key.MatchString(a.Name):
			t.Errorf("%q: a name must be a config key", a.Name)
		case a.Title == "", a.LoginHint == "":
			t.Errorf("%s: title %q, login hint %q", a.Name, a.Title, a.LoginHint)
		case a.Home.Dir == "" || len(a.Files) == 0:
			t.Errorf("%s: no home folder or no files to read", a.Name)
		case a.NewReader == nil || a.Recognize == nil:
			t.Errorf("%s: no reader or recogniser", a.Name)
		case a.SessionID == nil || len(a.Executables) == 0:
			t.Errorf("%s: no session id shape or process names", a.Name)
		}
		for _, f := range a.Files {
			if f.Pattern == "" || strings.HasPrefix(f.Pattern, "/") || strings.Contains(f.Pattern, "..") {
				t.Errorf("%s: pattern %q is not below the root", a.Name, f.Pattern)
			}
		}
		if r := a.Resume; r != nil {
			argv := r.Argv("SESSION", "TEXT")
			if len(argv) < 3 || !slices.Contains(argv, "TEXT") || !slices.ContainsFunc(argv, func(s string) bool { return strings.Contains(s, "SESSION") }) {
				t.Errorf("%s: resume command %q does not carry the session and the text", a.Name, argv)
			}
		}
		if h := a.Hook; h != nil && (h.Record == nil || h.EventVar == "" || (h.CountDB == "") != (h.CountQuery == "")) {
			t.Errorf("%s: incomplete hook %+v", a.Name, h)
		}
	}
}
