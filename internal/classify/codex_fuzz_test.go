package classify

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzCodexRollout feeds two records to a fresh rollout reader, then lets it
// settle: no input may panic, every event names the agent and a kind, and
// only turn_failed carries a failure.
func FuzzCodexRollout(f *testing.F) {
	for _, name := range []string{"usage-limit.jsonl", "interrupted.jsonl", "old-0.98.0-api500.jsonl", "stream-disconnect.jsonl"} {
		data, err := os.ReadFile(filepath.Join(codexSamples, name))
		if err != nil {
			f.Fatal(err)
		}
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, MaxRecordBytes)
		for sc.Scan() {
			if len(sc.Bytes()) <= 4096 {
				lines = append(lines, bytes.Clone(sc.Bytes()))
			}
		}
		for i, l := range lines {
			f.Add(l, lines[(i+1)%len(lines)])
		}
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		r := newCodexRollout("sessions/2026/11/30/rollout-x.jsonl", nil)
		events := append(r.Read(first), r.Read(second)...)
		events = append(events, r.Settle(time.Hour)...)
		for _, e := range events {
			if e.Agent != "codex" || e.Kind == "" {
				t.Fatalf("event without agent or kind: %+v", e)
			}
			if (e.Kind == TurnFailed) != (e.Failure != nil) {
				t.Fatalf("kind and failure disagree: %+v", e)
			}
		}
	})
}
