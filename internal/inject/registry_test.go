//go:build linux

package inject

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"nudge/internal/testenv"
)

func TestBuildOrder(t *testing.T) {
	// Only tmux, screen, zellij and wezterm are "installed".
	var path []string
	for _, name := range []string{"tmux", "screen", "zellij", "wezterm"} {
		path = append(path, filepath.Join(standIn(t, name, "").dir, "bin"))
	}
	t.Setenv("PATH", strings.Join(path, ":"))

	inj, err := Build([]string{Auto}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	auto := inj.Backends()
	order := []int{slices.Index(auto, "tmux"), slices.Index(auto, "screen"), slices.Index(auto, "zellij"), slices.Index(auto, "wezterm")}
	if !slices.IsSorted(order) || order[0] < 0 {
		t.Errorf("auto = %q, want tmux, screen, zellij, then wezterm", auto)
	}
	for _, absent := range []string{"kitty", "iterm2", "terminal", "resume"} {
		if slices.Contains(auto, absent) {
			t.Errorf("auto = %q includes %s, which is not available", auto, absent)
		}
	}
	inj, _ = Build(nil, Options{Resume: map[string]bool{"codex": true}})
	if names := inj.Backends(); names[len(names)-1] != "resume" {
		t.Errorf("auto with resume on = %q, want resume last", names)
	}

	inj, err = Build([]string{"kitty", "tmux"}, Options{})
	if err != nil || !slices.Equal(inj.Backends(), []string{"kitty", "tmux"}) {
		t.Errorf("explicit [kitty tmux] = %v, %v", inj.Backends(), err)
	}
	inj, err = Build([]string{"wezterm", Auto}, Options{})
	if names := inj.Backends(); err != nil || names[0] != "wezterm" || slices.Index(names[1:], "wezterm") >= 0 || !slices.Contains(names, "tmux") {
		t.Errorf("[wezterm auto] = %q, %v", names, err)
	}

	for _, bad := range [][]string{{"tmux", "byobu"}, {"tmux", "tmux"}, {Auto, Auto}} {
		if _, err := Build(bad, Options{}); err == nil {
			t.Errorf("Build(%q) succeeded", bad)
		}
	}
	if _, err := Build([]string{"byobu"}, Options{}); err == nil || !strings.Contains(err.Error(), `unknown backend "byobu"`) {
		t.Errorf("Build(unknown) = %v", err)
	}
}

// The README's table of terminals lists the backends in the order
// `inject.order: [auto]` tries them, as it says.
func TestReadmeListsTheBackendsInTheirOrder(t *testing.T) {
	// The first cell of each row, as the README names the backends.
	names := map[string][]string{
		"`nudge wrap`": {"wrap"}, "tmux": {"tmux"}, "GNU screen": {"screen"}, "zellij": {"zellij"},
		"WezTerm": {"wezterm"}, "kitty": {"kitty"}, "iTerm2, Terminal.app": {"iterm2", "terminal"},
		"OpenCode": {"opencode"}, "headless resume": {"resume"},
	}
	var listed []string
	for _, cells := range testenv.DocTable(t, "README.md", "## Terminals") {
		backends, ok := names[cells[0]]
		if !ok {
			t.Fatalf("README row %q names no backend this test knows", cells[0])
		}
		listed = append(listed, backends...)
	}
	if want := Names(); !slices.Equal(listed, want) {
		t.Errorf("README lists the terminals as %q; inject.order: [auto] tries %q", listed, want)
	}
}
