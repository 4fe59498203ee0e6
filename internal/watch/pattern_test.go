package watch

import (
	"path"
	"strings"
	"testing"
)

// FuzzSegment checks the quick matching of a pattern's segment against
// path.Match, which it stands in for.
func FuzzSegment(f *testing.F) {
	for _, s := range [][2]string{
		{"*.jsonl", "a.jsonl"}, {"*.jsonl", ".jsonl"}, {"*.jsonl", "a.json"},
		{"rollout-*.jsonl", "rollout-1.jsonl"}, {"rollout-*.jsonl", "rollout.jsonl"}, {"ab*ba", "aba"},
		{"projects", "projects"}, {"projects", "project"}, {"*", "x"}, {"wire.jsonl", "wire.jsonl"},
		{"a?c", "abc"}, {"[a-c]*", "b1"}, {`\*x`, "*x"}, {"*a*", "bab"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if pattern == "" || strings.Contains(pattern, "/") || strings.Contains(name, "/") || name == "" {
			return // segments hold no separator; names are never empty
		}
		want, err := path.Match(pattern, name)
		if err != nil {
			return // refused by splitPattern
		}
		if got := newSegment(pattern).match(name); got != want {
			t.Fatalf("segment %q against %q: %v, path.Match says %v", pattern, name, got, want)
		}
	})
}
