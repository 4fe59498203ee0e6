package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"nudge/internal/samples"
)

// claudeBenchLines is a few MB of real-shape transcript: every top-level
// sample, twice over, split into lines.
func claudeBenchLines(b *testing.B) (lines [][]byte, size int64) {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(claudeSamples, "*.jsonl"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no Claude samples: %v", err)
	}
	for range 2 {
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, MaxRecordBytes)
			for sc.Scan() {
				lines = append(lines, bytes.Clone(sc.Bytes()))
				size += int64(len(sc.Bytes()) + 1)
			}
		}
	}
	return lines, size
}

func BenchmarkClaudeTranscript(b *testing.B) {
	lines, size := claudeBenchLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r := newClaudeReader("projects/-p/s.jsonl", nil)
		for _, l := range lines {
			r.Read(l)
		}
	}
}

// busyLines are the records of a session at work, as a busy daemon reads
// them (docs/performance.md §3): the lines of a sample that give
// agent_activity and nothing else (answers, tool calls, tool results, API
// requests), neither a person's prompt nor a turn's end, as r reads them.
func busyLines(b *testing.B, sample string, r interface{ Read([]byte) []Event }) (lines [][]byte, size int64) {
	b.Helper()
	data, err := os.ReadFile(sample)
	if err != nil {
		b.Fatal(err)
	}
	for l := range bytes.Lines(data) {
		l = bytes.TrimSuffix(l, []byte("\n"))
		events := r.Read(l)
		if len(events) > 0 && !slices.ContainsFunc(events, func(e Event) bool { return e.Kind != AgentActivity }) {
			lines = append(lines, l)
			size += int64(len(l) + 1)
		}
	}
	if len(lines) == 0 {
		b.Fatalf("no records of work in %s", sample)
	}
	return lines, size
}

// benchmarkBusy reads the records of work of a sample again and again.
func benchmarkBusy(b *testing.B, sample string, newReader func() interface{ Read([]byte) []Event }) {
	lines, size := busyLines(b, sample, newReader())
	b.SetBytes(size)
	b.ReportAllocs()
	r := newReader()
	for b.Loop() {
		for _, l := range lines {
			r.Read(l)
		}
	}
}

// BenchmarkClaudeBusy reads the records of a Claude Code session at work
// (interactive-main.jsonl).
func BenchmarkClaudeBusy(b *testing.B) {
	benchmarkBusy(b, samples.Dir("claude", "interactive-main.jsonl"), func() interface{ Read([]byte) []Event } {
		return newClaudeReader("projects/-p/s.jsonl", nil)
	})
}

// BenchmarkCodexBusy reads the records of a Codex session at work
// (tui-session-full.jsonl, the rollout make bench writes).
func BenchmarkCodexBusy(b *testing.B) {
	benchmarkBusy(b, samples.Dir("codex", "tui-session-full.jsonl"), func() interface{ Read([]byte) []Event } {
		return newCodexRollout("sessions/2026/11/30/rollout-x.jsonl", nil)
	})
}

// BenchmarkDecodeEveryLine is the naive reader the transcript reader is
// measured against: every line decoded into a map.
func BenchmarkDecodeEveryLine(b *testing.B) {
	lines, size := claudeBenchLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			var m map[string]any
			_ = json.Unmarshal(l, &m)
		}
	}
}
