package classify

import (
	"path/filepath"
	"testing"
)

// claudeSampleLines returns the lines of the sample transcripts, short ones
// first, as fuzz seeds.
func claudeSampleLines(t testing.TB, maxLen int) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(claudeSamples, "excerpts", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Claude samples: %v", err)
	}
	return fuzzSeedLines(t, maxLen, files...)
}

// FuzzClaudeTranscript feeds two records to a fresh transcript reader: no
// input may panic, every event names the agent and a kind, and only
// turn_failed and usage_limited carry a failure.
func FuzzClaudeTranscript(f *testing.F) {
	lines := claudeSampleLines(f, 4096)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newClaudeReader("projects/-p/s.jsonl", nil)
		for _, e := range append(r.Read(first), r.Read(second)...) {
			if e.Agent != "claude" || e.Kind == "" {
				t.Fatalf("event without agent or kind: %+v", e)
			}
			hasFailure := e.Kind == TurnFailed || e.Kind == UsageLimited
			if hasFailure != (e.Failure != nil) {
				t.Fatalf("kind and failure disagree: %+v", e)
			}
		}
	})
}

// FuzzClaudeRegistry feeds two snapshots to a fresh registry reader.
func FuzzClaudeRegistry(f *testing.F) {
	f.Add([]byte(`{"pid":555,"sessionId":"s","cwd":"/p","tmux":"cc3:@3.%3","status":"waiting","waitingFor":"permission prompt","updatedAt":1796029100000}`), []byte(``))
	f.Add([]byte(`{"pid":555,"status":"busy"}`), []byte(`{"pid":555,"status":"idle","tmux":"%"}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newClaudeReader("sessions/555.json", nil)
		for _, e := range append(r.Read(first), r.Read(second)...) {
			if e.Process == nil {
				t.Fatalf("registry event without process: %+v", e)
			}
		}
	})
}
