//go:build linux

package inject

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuildOrder(t *testing.T) {
	// Only tmux and wezterm are "installed".
	tmux, wezterm := standIn(t, "tmux", ""), standIn(t, "wezterm", "")
	t.Setenv("PATH", filepath.Join(tmux.dir, "bin")+":"+filepath.Join(wezterm.dir, "bin"))

	inj, err := Build([]string{Auto}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	auto := inj.Backends()
	if i, j := slices.Index(auto, "tmux"), slices.Index(auto, "wezterm"); i < 0 || j < i {
		t.Errorf("auto = %q, want tmux then wezterm", auto)
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

	for _, bad := range [][]string{{"tmux", "screen"}, {"tmux", "tmux"}, {Auto, Auto}} {
		if _, err := Build(bad, Options{}); err == nil {
			t.Errorf("Build(%q) succeeded", bad)
		}
	}
	if _, err := Build([]string{"screen"}, Options{}); err == nil || !strings.Contains(err.Error(), `unknown backend "screen"`) {
		t.Errorf("Build(unknown) = %v", err)
	}
}
