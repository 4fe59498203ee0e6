package testenv

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// outside are the packages that reach outside the process: a database, the
// network, other programs.
var outside = []string{"database/sql", "net", "net/http", "os/exec", "modernc.org/sqlite"}

// Pure fails the test unless the package pkg (an import path) is pure
// logic: it links none of the packages that reach outside the process, it
// imports neither os nor io/ioutil itself (it opens no file), and the
// nudge packages it depends on are exactly nudge. It asks `go list`, with
// the go command the tests run under.
func Pure(t *testing.T, pkg string, nudge ...string) {
	t.Helper()
	goCmd := Need(t, "go")
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(goCmd, append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
		}
		return strings.Fields(string(out))
	}
	var own []string
	for _, dep := range list("-deps", pkg) {
		if slices.Contains(outside, dep) {
			t.Errorf("%s links %s, which reaches outside the process", pkg, dep)
		}
		if strings.HasPrefix(dep, "nudge/") && dep != pkg {
			own = append(own, dep)
		}
	}
	slices.Sort(own)
	slices.Sort(nudge)
	if !slices.Equal(own, nudge) {
		t.Errorf("%s depends on %v, want %v", pkg, own, nudge)
	}
	for _, imp := range list("-f", `{{join .Imports " "}}`, pkg) {
		if imp == "os" || imp == "io/ioutil" {
			t.Errorf("%s imports %s: it must not open files", pkg, imp)
		}
	}
}
