package classify

import (
	"path/filepath"
	"testing"
)

// FuzzGrok feeds two hook records to a fresh reader.
func FuzzGrok(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(grokSamples, "*.jsonl"))
	lines := fuzzSeedLines(f, 1<<20, files...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newGrokReader("hooks/s.jsonl")
		fuzzCheckEvents(t, grokName, append(r.Read(first), r.Read(second)...))
	})
}
