package classify

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// kimiSeedLines returns the lines of files up to maxLen bytes, as fuzz seeds.
func kimiSeedLines(t testing.TB, maxLen int, files ...string) [][]byte {
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
			if len(sc.Bytes()) <= maxLen {
				lines = append(lines, bytes.Clone(sc.Bytes()))
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no seed lines in %v", files)
	}
	return lines
}

// kimiCheckEvents fails on an event without the agent or a kind, or whose
// failure does not match its kind.
func kimiCheckEvents(t *testing.T, agent string, events []Event) {
	t.Helper()
	for _, e := range events {
		if e.Agent != agent || e.Kind == "" || e.Session == "" {
			t.Fatalf("event without agent, kind or session: %+v", e)
		}
		if (e.Kind == TurnFailed) != (e.Failure != nil) {
			t.Fatalf("kind and failure disagree: %+v", e)
		}
	}
}

// FuzzKimiCode feeds three records to a fresh Kimi Code wire reader: no
// input may panic, and events are well formed.
func FuzzKimiCode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(kimiSamples, "tmux_interactive", "*", "kimi_home", "sessions", "*", "*", "agents", "main", "wire.jsonl"))
	lines := kimiSeedLines(f, 4096, files...)
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)], lines[(i+2)%len(lines)])
	}
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		r := newKimiCodeWire("sessions/wd_p_0/session_s/agents/main/wire.jsonl")
		kimiCheckEvents(t, kimiCodeName, append(append(r.Read(a), r.Read(b)...), r.Read(c)...))
	})
}

// FuzzKimiLegacy feeds a log line and two wire records of one root to fresh
// legacy readers.
func FuzzKimiLegacy(f *testing.F) {
	root := filepath.Join(kimiLegacySamples, "constructed-provider-error", ".kimi")
	wires, _ := filepath.Glob(filepath.Join(root, "sessions", "*", "*", "wire.jsonl"))
	wire := kimiSeedLines(f, 4096, append(wires, filepath.Join(kimiLegacySamples, "legacy-protocol-1.3", "wire.jsonl"))...)
	logs := kimiSeedLines(f, 4096, filepath.Join(root, "logs", "kimi.log"))
	for i, l := range wire {
		f.Add(logs[i%len(logs)], l, wire[(i+1)%len(wire)])
	}
	dir := f.TempDir() // one root for every input: its book is bounded
	f.Fuzz(func(t *testing.T, logLine, a, b []byte) {
		lr := newKimiLegacyReader(filepath.Join(dir, "logs", "kimi.log"))
		if events := lr.Read(logLine); len(events) != 0 {
			t.Fatalf("the log reader gave events: %+v", events)
		}
		wr := newKimiLegacyReader(filepath.Join(dir, "sessions", "b", "sid", "wire.jsonl"))
		kimiCheckEvents(t, kimiLegacyName, append(wr.Read(a), wr.Read(b)...))
	})
}
