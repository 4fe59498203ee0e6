package classify

import (
	"path/filepath"
	"testing"
)

// FuzzMuse feeds two frame-log lines to a fresh reader.
func FuzzMuse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(museSamples, "*.ndjson"))
	lines := fuzzSeedLines(f, 1<<20, files...)
	lines = append(lines, museLog(msStarted, msUsageHit, msFailed(`{"kind":"modelError","message":"x","retryable":true}`))...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newMuseReader("frames/conn.ndjson")
		fuzzCheckEvents(t, museName, append(r.Read(first), r.Read(second)...))
	})
}
