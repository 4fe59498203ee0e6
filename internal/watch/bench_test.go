package watch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDetectionLatency measures from appending a line to a session file
// to receiving its Batch, on a real folder with real folder events.
func BenchmarkDetectionLatency(b *testing.B) {
	root := b.TempDir()
	file := filepath.Join(root, "projects", "-home-dev-p", "s.jsonl")
	appendTo(b, file, "{\"type\":\"user\"}\n")
	w := readyWatcher(b, root)
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
		awaitLines(w, 1)
		latencies = append(latencies, time.Since(start))
	}
	slices.Sort(latencies)
	at := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkBusyFiles is the watcher's part of busy agents: 200 session files
// held open, a record of about 1 KB appended to each, all 200 received; an op
// is one such round. cpu-µs/record is the process's CPU (user and system)
// per record.
func BenchmarkBusyFiles(b *testing.B) {
	root := b.TempDir()
	files := make([]*os.File, 200)
	for i := range files {
		path := filepath.Join(root, "projects", "-home-dev-p", fmt.Sprintf("s%03d.jsonl", i))
		appendTo(b, path, "{\"type\":\"user\"}\n")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		files[i] = f
	}
	w := readyWatcher(b, root)
	line := []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("done ", 190) + `"}]}}` + "\n")
	round := func() {
		for _, f := range files {
			if _, err := f.Write(line); err != nil {
				b.Fatal(err)
			}
		}
		awaitLines(w, len(files))
	}
	round() // each file's identity taken, and held open
	start := cpuTime(b)
	for b.Loop() {
		round()
	}
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N*len(files)), "cpu-µs/record")
}

// readyWatcher runs a watcher of the Claude Code files under root, past its
// first look.
func readyWatcher(b *testing.B, root string) *Watcher {
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
	return w
}

// awaitLines waits for the Batches holding n lines, releasing each as the
// daemon does.
func awaitLines(w *Watcher, n int) {
	for got := 0; got < n; {
		b := <-w.Batches()
		for _, rec := range b.Records {
			if !rec.Checkpoint {
				got++
			}
		}
		b.Release()
	}
}

// cpuTime is the CPU the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
