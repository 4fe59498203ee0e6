package classify

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// museSeedLines returns the lines of files, as fuzz seeds (Muse and Grok).
func museSeedLines(t testing.TB, files []string) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, MaxRecordBytes)
		for sc.Scan() {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	if len(lines) == 0 {
		t.Fatal("no seed lines")
	}
	return lines
}

// museCheckEvents holds for the Muse and Grok readers: each event names its agent, session
// and kind, and only turn_failed and usage_limited carry a failure.
func museCheckEvents(t *testing.T, agent string, events []Event) {
	t.Helper()
	for _, e := range events {
		if e.Agent != agent || e.Kind == "" || e.Session == "" {
			t.Fatalf("event without agent, session or kind: %+v", e)
		}
		if hasFailure := e.Kind == TurnFailed || e.Kind == UsageLimited; hasFailure != (e.Failure != nil) {
			t.Fatalf("kind and failure disagree: %+v", e)
		}
		if _, err := e.MarshalLine(); err != nil {
			t.Fatalf("event cannot be printed: %v", err)
		}
	}
}

// FuzzMuse feeds two frame-log lines to a fresh reader.
func FuzzMuse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(museSamples, "*.ndjson"))
	lines := museSeedLines(f, files)
	for _, l := range museLog(msStarted, msUsageHit, msFailed(`{"kind":"modelError","message":"x","retryable":true}`)) {
		lines = append(lines, l)
	}
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newMuseReader("frames/conn.ndjson")
		museCheckEvents(t, museName, append(r.Read(first), r.Read(second)...))
	})
}
