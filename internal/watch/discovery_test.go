package watch

import (
	"path/filepath"
	"testing"

	"nudge/internal/classify"
)

// Every agent of the registry is watched: its home gives a default root,
// and its file patterns are ones the watcher takes.
func TestEveryAgentIsWatched(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	roots := map[string]string{}
	for _, a := range classify.Agents() {
		if a.Home.Env != "" {
			t.Setenv(a.Home.Env, "")
		}
		roots[a.Name] = ""
		if got, want := DefaultRoot(a.Name), filepath.Join(home, a.Home.Dir); a.Home.Dir == "" || got != want {
			t.Errorf("%s: default root %q, want %q", a.Name, got, want)
		}
	}
	sources := Sources(roots)
	if len(sources) != len(classify.Agents()) {
		t.Fatalf("%d sources for %d agents: %+v", len(sources), len(classify.Agents()), sources)
	}
	for _, s := range sources {
		if len(s.Files) == 0 {
			t.Errorf("%s: no files to read", s.Agent)
		}
		if _, err := New(Options{Sources: []Source{s}}); err != nil {
			t.Errorf("%s: %v", s.Agent, err)
		}
	}
}
