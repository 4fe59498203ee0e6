package classify

import (
	"path/filepath"
	"testing"
)

// FuzzGemini feeds three records to a fresh Gemini CLI chat reader: no
// input may panic, and events are well formed.
func FuzzGemini(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(geminiSamples, "*", "tmp", "*", "chats", "session-*.jsonl"))
	lines := fuzzSeedLines(f, 4096, files...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)], lines[(i+2)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		r := newGeminiChat("tmp/p/chats/session-2026-12-04T01-40-e566dd1d.jsonl", nil)
		fuzzCheckEvents(t, geminiName, append(append(r.Read(a), r.Read(b)...), r.Read(c)...))
	})
}
