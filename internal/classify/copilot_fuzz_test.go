package classify

import (
	"path/filepath"
	"testing"
)

// FuzzCopilot feeds three records to a fresh Copilot CLI event reader: no
// input may panic, and events are well formed.
func FuzzCopilot(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(copilotSamples, "*", "session-state", "*", "events.jsonl"))
	lines := fuzzSeedLines(f, 4096, files...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)], lines[(i+2)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		r := newCopilotEvents(copilotPath, nil)
		fuzzCheckEvents(t, copilotName, append(append(r.Read(a), r.Read(b)...), r.Read(c)...))
	})
}
