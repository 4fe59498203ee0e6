package classify

import (
	"path/filepath"
	"testing"

	"nudge/internal/watch/disk"
)

// FuzzKimiCode feeds three records to a fresh Kimi Code wire reader: no
// input may panic, and events are well formed.
func FuzzKimiCode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(kimiSamples, "tmux_interactive", "*", "kimi_home", "sessions", "*", "*", "agents", "main", "wire.jsonl"))
	lines := fuzzSeedLines(f, 4096, files...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)], lines[(i+2)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		r := newKimiCodeWire("sessions/wd_p_0/session_s/agents/main/wire.jsonl", nil)
		fuzzCheckEvents(t, kimiCodeName, append(append(r.Read(a), r.Read(b)...), r.Read(c)...))
	})
}

// FuzzKimiLegacy feeds a log line and two wire records of one root to fresh
// legacy readers.
func FuzzKimiLegacy(f *testing.F) {
	root := filepath.Join(kimiLegacySamples, "constructed-provider-error", ".kimi")
	wires, _ := filepath.Glob(filepath.Join(root, "sessions", "*", "*", "wire.jsonl"))
	wire := fuzzSeedLines(f, 4096, append(wires, filepath.Join(kimiLegacySamples, "legacy-protocol-1.3", "wire.jsonl"))...)
	logs := fuzzSeedLines(f, 4096, filepath.Join(root, "logs", "kimi.log"))
	for i, l := range wire {
		f.Add(logs[i%len(logs)], l, wire[(i+1)%len(wire)])
	}
	dir := f.TempDir() // one root for every input: its book is bounded
	f.Fuzz(func(t *testing.T, logLine, a, b []byte) {
		lr := newKimiLegacyReader(filepath.Join(dir, "logs", "kimi.log"), disk.Files{})
		if events := lr.Read(logLine); len(events) != 0 {
			t.Fatalf("the log reader gave events: %+v", events)
		}
		wr := newKimiLegacyReader(filepath.Join(dir, "sessions", "b", "sid", "wire.jsonl"), disk.Files{})
		fuzzCheckEvents(t, kimiLegacyName, append(wr.Read(a), wr.Read(b)...))
	})
}
