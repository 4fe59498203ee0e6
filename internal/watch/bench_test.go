package watch

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkDetectionLatency measures from appending a line to a session file
// to receiving its Batch, on a real folder with real folder events.
func BenchmarkDetectionLatency(b *testing.B) {
	root := b.TempDir()
	file := filepath.Join(root, "projects", "-home-dev-p", "s.jsonl")
	appendTo(b, file, "{\"type\":\"user\"}\n")
	w, err := New(Options{Sources: firstLook(claudeSources(root)), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	for b := range w.Batches() { // the first look's positions
		if b.Ready {
			break
		}
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}` + "\n")
	var latencies []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		for got := false; !got; {
			for _, rec := range (<-w.Batches()).Records {
				got = got || !rec.Checkpoint
			}
		}
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
