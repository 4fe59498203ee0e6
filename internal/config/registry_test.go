package config

import (
	"maps"
	"slices"
	"testing"

	"nudge/internal/classify"
)

// The defaults name every agent of the registry under agents, so that each
// has its settings (and `nudge config check` knows them), and no other.
func TestDefaultsNameEveryAgent(t *testing.T) {
	isolate(t)
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range classify.Agents() {
		want = append(want, a.Name)
		if s := cfg.Agents[a.Name]; !s.Enabled || s.Root != "" {
			t.Errorf("agents.%s = %+v, want on at its own root", a.Name, s)
		}
	}
	if got := slices.Sorted(maps.Keys(cfg.Agents)); !slices.Equal(got, want) {
		t.Errorf("defaults.yaml agents %v, registry %v", got, want)
	}
}

// The defaults name under inject.resume exactly the agents that have a
// headless resume command, each off.
func TestDefaultsNameEveryResume(t *testing.T) {
	isolate(t)
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range classify.Agents() {
		if a.Resume != nil {
			want = append(want, a.Name)
		}
	}
	if got := slices.Sorted(maps.Keys(cfg.Inject.Resume)); !slices.Equal(got, want) {
		t.Errorf("defaults.yaml inject.resume %v, agents with a resume command %v", got, want)
	}
	for name, on := range cfg.Inject.Resume {
		if on {
			t.Errorf("inject.resume.%s is on by default", name)
		}
	}
}

// An agent the settings leave out is on, at its own root.
func TestAgentNotNamedIsOn(t *testing.T) {
	var cfg Config
	if a := cfg.Agent("claude"); !a.Enabled || a.Root != "" {
		t.Errorf("Agent(claude) on empty settings = %+v", a)
	}
	cfg.Agents = map[string]Agent{"claude": {Root: "/r"}}
	if a := cfg.Agent("claude"); a.Enabled || a.Root != "/r" {
		t.Errorf("Agent(claude) = %+v, want the entry as written", a)
	}
}
