package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
