package watch

import (
	"os"
	"path/filepath"
	"sort"

	"nudge/internal/classify"
)

// FileSet is a family of files under an agent's root; each agent names its
// own in the registry (classify.Agent.Files).
type FileSet = classify.FileSet

// Source is one agent's root folder and the files nudge reads under it.
type Source struct {
	Agent string
	Root  string
	Files []FileSet
	// FirstLook: the root was never scanned before. The files its first
	// scan finds are old history: each begins at its end, with that
	// position handed out as a checkpoint (docs/durability.md).
	FirstLook bool
}

// DefaultRoot is the agent's own root folder (classify.Agent.Home): its
// environment variable when set, else its folder in the home directory; ""
// for an unknown agent or when there is no home directory.
func DefaultRoot(agent string) string {
	a, ok := classify.Lookup(agent)
	if !ok {
		return ""
	}
	h := a.Home
	if h.Env != "" {
		if dir := os.Getenv(h.Env); dir != "" {
			return filepath.Join(dir, h.Sub)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil || h.Dir == "" {
		return ""
	}
	return filepath.Join(home, h.Dir)
}

// Sources returns the sources of the agents named in roots, each with its
// configured root ("" = DefaultRoot) and the files its registry entry names,
// sorted by agent. Unknown agents, and agents without a root, are left out.
func Sources(roots map[string]string) []Source {
	var out []Source
	for agent, root := range roots {
		a, ok := classify.Lookup(agent)
		if !ok || len(a.Files) == 0 {
			continue
		}
		if root == "" {
			root = DefaultRoot(agent)
		}
		if root == "" {
			continue
		}
		out = append(out, Source{Agent: agent, Root: filepath.Clean(root), Files: append([]FileSet(nil), a.Files...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out
}
