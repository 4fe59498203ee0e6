package daemon

import (
	"maps"
	"slices"
	"testing"

	"nudge/internal/classify"
	"nudge/internal/config"
)

// Every agent of the registry is watched unless the settings turn it off,
// also one the settings do not name at all.
func TestRootsComeFromTheRegistry(t *testing.T) {
	var cfg config.Config
	cfg.Agents = map[string]config.Agent{
		"claude": {Enabled: true, Root: "/elsewhere/claude"},
		"codex":  {Enabled: false},
	}
	roots := (&Daemon{cfg: cfg}).roots()
	var want []string
	for _, a := range classify.Agents() {
		if a.Name != "codex" {
			want = append(want, a.Name)
		}
	}
	if got := slices.Sorted(maps.Keys(roots)); !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v", got, want)
	}
	if roots["claude"] != "/elsewhere/claude" || roots["kimi_code"] != "" {
		t.Errorf("roots %v: claude's configured root and kimi_code's own expected", roots)
	}
}
