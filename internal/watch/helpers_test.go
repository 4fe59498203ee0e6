package watch

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"nudge/internal/classify"
)

// wait is how long a test waits for an asynchronous effect.
const wait = 10 * time.Second

// logBuffer collects a watcher's log for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// run is a running watcher with its batches collected in order; the
// checkpoints are kept apart from the lines.
type run struct {
	t           *testing.T
	w           *Watcher
	log         *logBuffer
	batches     chan Batch
	pending     []Record
	checkpoints []Record
	stop        func()
}

// take files a batch's records: lines to pending, checkpoints apart.
func (r *run) take(b Batch) {
	for _, rec := range b.Records {
		if rec.Checkpoint {
			r.checkpoints = append(r.checkpoints, rec)
		} else {
			r.pending = append(r.pending, rec)
		}
	}
}

// claudeSources is the claude discovery entry with its root at dir, taking
// any line (the tests of JSON records use Sources).
func claudeSources(dir string) []Source {
	return anyLine(Sources(map[string]string{"claude": dir}))
}

// anyLine makes every file set of src take any line.
func anyLine(src []Source) []Source {
	for i := range src {
		for j := range src[i].Files {
			if src[i].Files[j].Kind == classify.JSONLines {
				src[i].Files[j].Kind = classify.Lines
			}
		}
	}
	return src
}

// firstLook marks every source at its first look.
func firstLook(src []Source) []Source {
	for i := range src {
		src[i].FirstLook = true
	}
	return src
}

// events is how the tests' watchers see changes (TestFolderLevelDesign runs
// them again with EventsFolders).
var events = EventsAuto

// options are test defaults: no backstop scan, so folder events must do the work.
func options(sources []Source) Options {
	return Options{Sources: sources, Rescan: time.Hour, Events: events, Latency: 20 * time.Millisecond}
}

// folderWatcher is the inotify watcher under w's folder events.
func folderWatcher(w *Watcher) *fsnotify.Watcher {
	if w.folders != nil {
		return notifyWatcher(w.folders)
	}
	return w.fsw
}

// startRun starts a watcher, consuming its batches, and waits until it is ready.
func startRun(t *testing.T, opts Options, prepare ...func(*Watcher)) *run {
	t.Helper()
	r := newRun(t, opts, prepare...)
	go func() {
		for b := range r.w.Batches() {
			r.batches <- b
		}
		close(r.batches)
	}()
	r.waitReady()
	return r
}

// startStoring is startRun with a consumer that acknowledges each batch
// as stored as soon as it is handed out.
func startStoring(t *testing.T, opts Options) *run {
	t.Helper()
	r := newRun(t, opts)
	go func() {
		for b := range r.w.Batches() {
			r.w.Ack(b.Seq)
			r.batches <- b
		}
		close(r.batches)
	}()
	r.waitReady()
	return r
}

// cold waits until no file is open, then reports whether the file at path
// is followed with no state of reading it, only its position. Answers to
// a Sync of a path no source names, before and after the look, hold the
// watcher between two steps.
func (r *run) cold(path string) bool {
	r.t.Helper()
	eventually(r.t, "every file closed", func() bool { return r.w.Stats().FilesOpen == 0 })
	nowhere := filepath.Join(r.t.TempDir(), "nowhere.jsonl")
	between := func() {
		if recs := r.synced(nowhere); len(recs) > 0 {
			r.t.Fatalf("records while waiting for idle files: %s", describe(recs))
		}
	}
	between()
	t := r.w.tails[path]
	cold := t != nil && t.reading == nil
	between()
	return cold
}

// newRun starts a watcher without reading its batches.
func newRun(t *testing.T, opts Options, prepare ...func(*Watcher)) *run {
	t.Helper()
	logs := &logBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, p := range prepare {
		p(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	r := &run{t: t, w: w, log: logs, batches: make(chan Batch, 100000)}
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	return r
}

func (r *run) waitReady() {
	r.t.Helper()
	eventually(r.t, "watcher ready", r.w.Ready)
}

// records returns the next n records.
func (r *run) records(n int) []Record {
	r.t.Helper()
	deadline := time.After(wait)
	for len(r.pending) < n {
		select {
		case b, ok := <-r.batches:
			if !ok {
				r.t.Fatalf("batches closed after %d of %d records", len(r.pending), n)
			}
			r.take(b)
		case <-deadline:
			r.t.Fatalf("got %d of %d records: %s", len(r.pending), n, describe(r.pending))
		}
	}
	out := r.pending[:n:n]
	r.pending = r.pending[n:]
	return out
}

// synced asks for path to be read to its end and returns every record
// emitted before the answer.
func (r *run) synced(path string) []Record {
	r.t.Helper()
	r.w.Sync(path)
	deadline := time.After(wait)
	for {
		select {
		case b, ok := <-r.batches:
			if !ok {
				r.t.Fatal("batches closed before the sync answer")
			}
			r.take(b)
			if b.Synced == path {
				out := r.pending
				r.pending = nil
				return out
			}
		case <-deadline:
			r.t.Fatalf("no answer to Sync(%s)", path)
		}
	}
}

// lines returns the lines of recs, as text.
func lines(recs []Record) []string {
	out := make([]string, len(recs))
	for i, rec := range recs {
		out[i] = string(rec.Line)
	}
	return out
}

func describe(recs []Record) string {
	var b strings.Builder
	for _, rec := range recs {
		fmt.Fprintf(&b, "%s@%d:%q ", filepath.Base(rec.Path), rec.Offset, rec.Line)
	}
	return b.String()
}

func wantLinesText(t *testing.T, recs []Record, want ...string) {
	t.Helper()
	got := lines(recs)
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("got lines %q, want %q", got, want)
	}
}

// eventually polls cond until it holds, failing the test after wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// appendTo appends text to the file at path, creating it and its folders.
func appendTo(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
