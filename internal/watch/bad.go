package watch

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"nudge/internal/jsonscan"
)

// badLogEvery is how often one file's skipped lines are logged at most: the
// first at once, the rest counted into the next log line (docs/durability.md).
const badLogEvery = time.Minute

// maxSkippedFiles bounds the files Stats lists with their skipped lines.
const maxSkippedFiles = 20

// badLines counts the skipped lines of one file for its log lines.
type badLines struct {
	unlogged int       // skipped since the last log line
	logged   time.Time // when the last log line was written
	offset   int64     // where the latest one starts
	reason   string    // why the latest one was skipped
}

// SkippedFile is a file with skipped lines: how many since start, and the
// latest one.
type SkippedFile struct {
	Path   string    `json:"path"`
	Lines  int       `json:"lines"`
	Offset int64     `json:"offset"` // where the latest skipped line starts
	Reason string    `json:"reason"` // why it was skipped
	At     time.Time `json:"at"`     // when it was read
}

// badRecord says why line, a line of a file of JSON records, is not one; ""
// when it is one or is blank. A record is read once; the rest only tells
// why a line is none.
func badRecord(line []byte) string {
	switch {
	case jsonscan.Valid(line), len(bytes.TrimSpace(line)) == 0:
		return ""
	case bytes.IndexByte(line, 0) >= 0:
		return "binary data"
	}
	return "not a JSON record (malformed or cut off)"
}

// skipped counts a line of t skipped at offset, and logs it: at once when
// the file's last log line is older than badLogEvery, else with the next.
func (w *Watcher) skipped(t *tail, offset int64, reason string) {
	now := w.now()
	w.nSkipped.Add(1)
	if t.bad == nil {
		t.bad = &badLines{}
	}
	b := t.bad
	b.unlogged++
	b.offset, b.reason = offset, reason
	if b.logged.IsZero() || now.Sub(b.logged) >= badLogEvery {
		w.logBad(t, now)
	} else {
		w.owed[t] = struct{}{}
	}
	w.statsChanged()
	w.badMu.Lock()
	defer w.badMu.Unlock()
	f := w.badFiles[t.path]
	if f == nil {
		f = &SkippedFile{Path: t.path}
		w.badFiles[t.path] = f
	}
	f.Lines++
	f.Offset, f.Reason, f.At = offset, reason, now
}

// logBad writes t's log line for the lines skipped since its last one.
func (w *Watcher) logBad(t *tail, now time.Time) {
	b := t.bad
	w.log.Warn("bad line skipped", "path", t.path, "offset", b.offset, "reason", b.reason, "lines", b.unlogged)
	b.unlogged, b.logged = 0, now
	delete(w.owed, t)
}

// logUnloggedBad writes the log lines still owed for files whose last one
// is older than badLogEvery.
func (w *Watcher) logUnloggedBad() {
	now := w.now()
	for t := range w.owed {
		switch {
		case t.bad.unlogged == 0:
			delete(w.owed, t)
		case now.Sub(t.bad.logged) >= badLogEvery:
			w.logBad(t, now)
		}
	}
}

// skippedFiles lists the files with skipped lines, the latest first.
func (w *Watcher) skippedFiles() []SkippedFile {
	w.badMu.Lock()
	defer w.badMu.Unlock()
	out := make([]SkippedFile, 0, len(w.badFiles))
	for _, f := range w.badFiles {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].Path < out[j].Path
	})
	return out[:min(len(out), maxSkippedFiles)]
}

// capReason is why a line over the cap was skipped.
func capReason(bytes int64, lineCap int) string {
	return fmt.Sprintf("longer than the cap (%d bytes, cap %d)", bytes, lineCap)
}
