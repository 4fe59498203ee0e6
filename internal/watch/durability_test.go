package watch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFirstLookStoresEveryPosition: a root's first look opens no file but
// hands out one position per file, at its size, all in the batch that says
// the scan is done; a later start with those positions opens only the
// files that changed, and reads only what was added since, from the start
// of a line that was being written at the first look.
func TestFirstLookStoresEveryPosition(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"a.jsonl": "old 1\nold 2\n",
		"b.jsonl": "old\nbeing writ", // a line being written: its start is the position
		"c.jsonl": "",
		"d.jsonl": strings.Repeat("x", 10<<10) + "\n" + strings.Repeat("y", 9<<10) + "\nlast\n", // longer than the first look-back
	}
	for name, text := range files {
		appendTo(t, filepath.Join(root, "projects", "p", name), text)
	}
	r := newRun(t, options(firstLook(claudeSources(root))))
	var ready Batch
	for b := range r.w.Batches() {
		if b.Ready {
			ready = b
			break
		}
		if len(b.Records) > 0 {
			t.Fatalf("a batch before the first scan ended: %s", describe(b.Records))
		}
	}
	positions := map[string]Position{}
	for _, rec := range ready.Records {
		if !rec.Checkpoint || rec.Line != nil {
			t.Fatalf("history read on a first look: %s", describe(ready.Records))
		}
		positions[rec.Path] = rec.Position()
	}
	if open := r.w.Stats().FilesOpen; open != 0 {
		t.Errorf("%d files open after a first look; it opens none", open)
	}
	want := map[string]int64{"a.jsonl": 12, "b.jsonl": 14, "c.jsonl": 0, "d.jsonl": int64(len(files["d.jsonl"]))}
	if len(positions) != len(want) {
		t.Fatalf("positions %+v, want one per file", positions)
	}
	for name, off := range want {
		p := positions[filepath.Join(root, "projects", "p", name)]
		if p.Offset != off || p.File.Inode == 0 {
			t.Errorf("%s: position %+v, want offset %d", name, p, off)
		}
		if p.Mark != "" || p.File.Fingerprint != "" {
			t.Errorf("%s: position %+v: a first look reads no bytes to fingerprint", name, p)
		}
	}
	r.stop()

	// A restart before anything changed opens nothing either, once the
	// files are older than the positions' store.
	opts := options(claudeSources(root))
	opts.Positions = positions
	opts.Stored = time.Now().Add(time.Second)
	r = startRun(t, opts)
	if open := r.w.Stats().FilesOpen; open != 0 {
		t.Errorf("%d files open after a restart with nothing changed", open)
	}
	r.stop()

	appendTo(t, filepath.Join(root, "projects", "p", "b.jsonl"), "ten\n")
	appendTo(t, filepath.Join(root, "projects", "p", "a.jsonl"), "new\n")
	r = startRun(t, opts)
	if open := r.w.Stats().FilesOpen; open != 2 {
		t.Errorf("%d files open after the start, want the 2 that changed", open)
	}
	var got []string
	for _, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"} {
		got = append(got, lines(r.synced(filepath.Join(root, "projects", "p", name)))...)
	}
	if strings.Join(got, "|") != "new|being written" {
		t.Fatalf("after a restart: %q, want only what was added", got)
	}
}

// TestDeferredIdentityIsTakenAtTheFirstChange: the identity a first look
// did not take is taken when the file first changes; from then on a
// rewrite of the bytes before the position is seen as such.
func TestDeferredIdentityIsTakenAtTheFirstChange(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "history\n")
	r := startRun(t, options(firstLook(claudeSources(root))))
	appendTo(t, file, "first change\n")
	recs := r.synced(file)
	wantLinesText(t, recs, "first change")
	p := recs[0].Position()
	if p.File.Fingerprint == "" || p.Mark == "" {
		t.Fatalf("position %+v after the first change: no identity taken", p)
	}
	r.stop()

	if err := os.WriteFile(file, []byte("HISTORY\nFIRST CHANGE\nmore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := options(claudeSources(root))
	opts.Positions = map[string]Position{file: p}
	r = startRun(t, opts)
	wantLinesText(t, r.synced(file), "HISTORY", "FIRST CHANGE", "more")
	if !strings.Contains(r.log.String(), "reading it from the start") {
		t.Errorf("no log of the rewrite:\n%s", r.log)
	}
}

// TestPositionMarkMatchesTheFile: the mark a line record carries is the one
// read back from the file at its End.
func TestPositionMarkMatchesTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{"short\n", strings.Repeat("z", 600) + "\n", "a\n\nb\r\n"} {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, []byte("head line\n"+text), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		line := bytes.TrimSuffix([]byte(text), []byte("\n"))
		if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
			line = line[i+1:]
		}
		end := int64(len("head line\n" + text))
		m := lineMark(line)
		if ok, _, err := markHolds(f, end, end, m, make([]byte, markLen)); err != nil || !ok {
			t.Errorf("%q: the line's mark does not hold on the file: %v", text, err)
		}
		read, err := readMark(f, end)
		if err != nil || read.n < m.n {
			t.Errorf("%q: read mark %+v, %v", text, read, err)
		}
		if ok, _, _ := markHolds(f, end-1, end, m, make([]byte, markLen)); ok {
			t.Errorf("%q: the mark holds one byte early", text)
		}
		f.Close()
	}
}

// TestSameContentUnderANewInodeGoesOn: a file replaced by a copy of itself
// plus a line (mv over it, an editor's save) gives only the new line.
func TestSameContentUnderANewInodeGoesOn(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "one\ntwo\n")
	r := startRun(t, options(claudeSources(root)))
	wantLinesText(t, r.synced(file), "one", "two")

	tmp := filepath.Join(root, "s.tmp")
	appendTo(t, tmp, "one\ntwo\nthree\n")
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	wantLinesText(t, r.records(1), "three")
	wantLinesText(t, r.synced(file))
	if !strings.Contains(r.log.String(), "replaced by the same content") {
		t.Errorf("the replacement is not logged:\n%s", r.log)
	}
}

// TestSameHeadRewriteIsReadAgain: truncated and rewritten at once, longer,
// with the same first bytes: the bytes before the position changed, so the
// file is read from its start (never from the middle of a line), while
// running and after a restart.
func TestSameHeadRewriteIsReadAgain(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	head := strings.Repeat("h", 300) + "\n"
	appendTo(t, file, head+"first version line\n")
	r := startRun(t, options(claudeSources(root)))
	recs := r.synced(file)
	wantLinesText(t, recs, strings.TrimSuffix(head, "\n"), "first version line")
	pos := recs[1].Position()

	rewrite := head + "the second version, longer: its lines are elsewhere\nsecond line\n"
	if err := os.WriteFile(file, []byte(rewrite), 0o600); err != nil { // O_TRUNC, same inode
		t.Fatal(err)
	}
	// (Seen as a truncation when the watcher reads between the two.)
	wantLinesText(t, r.synced(file), strings.TrimSuffix(head, "\n"), "the second version, longer: its lines are elsewhere", "second line")
	r.stop()

	// The same while stopped: the stored position's mark no longer holds.
	opts := options(claudeSources(root))
	opts.Positions = map[string]Position{file: pos}
	r = startRun(t, opts)
	wantLinesText(t, r.synced(file), strings.TrimSuffix(head, "\n"), "the second version, longer: its lines are elsewhere", "second line")
	if !strings.Contains(r.log.String(), "was rewritten before the position") {
		t.Errorf("the rewrite is not logged:\n%s", r.log)
	}
}

// TestHeldOpenFileReadsOnAfterItsMark: an append to a file held open is
// read with one read, of the bytes before the position and what follows
// them. Those bytes holding, it reads on from the position, even though its
// first bytes were rewritten in place. An append larger than one read
// takes the full check, which sees them: the file is read from its start.
func TestHeldOpenFileReadsOnAfterItsMark(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	head := strings.Repeat("h", 300)
	appendTo(t, file, head+"\nfirst line\n")
	r := startRun(t, options(claudeSources(root)))
	wantLinesText(t, r.synced(file), head, "first line")

	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("H"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, "second line\n")
	wantLinesText(t, r.records(1), "second line")
	if strings.Contains(r.log.String(), "from the start") {
		t.Fatalf("an append read the file again:\n%s", r.log)
	}

	big := make([]string, 0, 3*readBuffer/100)
	var text strings.Builder
	for i := range cap(big) {
		big = append(big, fmt.Sprintf("%099d", i))
		text.WriteString(big[i] + "\n")
	}
	appendTo(t, file, text.String())
	wantLinesText(t, r.synced(file), append([]string{"H" + head[1:], "first line", "second line"}, big...)...)
	if !strings.Contains(r.log.String(), "reading it from the start") {
		t.Errorf("the first bytes' change is not logged:\n%s", r.log)
	}
}

// TestBadLinesAreCountedAndLogged: in a file of JSON records, malformed,
// cut-off and binary lines are skipped; each is counted, and the log says so
// once per file per minute with the count; a position past trailing bad
// lines is still handed out.
func TestBadLinesAreCountedAndLogged(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	mkdir(t, filepath.Dir(file))
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	r := startRun(t, options(Sources(map[string]string{"claude": root})), func(w *Watcher) {
		w.now = func() time.Time { return time.Unix(0, clock.Load()) }
	})

	appendTo(t, file, `{"ok":1}`+"\n"+`{"type":"assi`+"\n"+"\x00\x01\x02binary\n"+"\n"+`{"ok":2}`+"\n"+"not json at all\n")
	recs := r.synced(file)
	wantLinesText(t, recs, `{"ok":1}`, "", `{"ok":2}`)
	if got := r.w.Stats().LinesSkipped; got != 3 {
		t.Errorf("LinesSkipped %d, want 3", got)
	}
	if n := len(r.checkpoints); n != 1 || r.checkpoints[0].End != int64(len(`{"ok":1}`+"\n"+`{"type":"assi`+"\n"+"\x00\x01\x02binary\n"+"\n"+`{"ok":2}`+"\n"+"not json at all\n")) {
		t.Errorf("checkpoints %s, want one past the trailing bad line", describe(r.checkpoints))
	}
	logged := strings.Count(r.log.String(), `msg="bad line skipped"`)
	if logged != 1 || !strings.Contains(r.log.String(), `offset=9 reason="not a JSON record (malformed or cut off)" lines=1`) {
		t.Fatalf("log lines %d, want the first bad line at once and the rest held back:\n%s", logged, r.log)
	}
	files := r.w.Stats().SkippedFiles
	if len(files) != 1 || files[0].Path != file || files[0].Lines != 3 || files[0].Reason != "not a JSON record (malformed or cut off)" {
		t.Errorf("SkippedFiles %+v", files)
	}

	// A minute later the count held back is logged with no new line: the
	// watcher's own timer (a look at another path wakes its loop, which
	// sets the timer by the moved clock).
	clock.Store(now.Add(time.Minute).UnixNano())
	r.synced(filepath.Join(root, "elsewhere.jsonl"))
	eventually(t, "the held-back count logged", func() bool {
		return strings.Count(r.log.String(), `msg="bad line skipped"`) == 2 &&
			strings.Contains(r.log.String(), `reason="not a JSON record (malformed or cut off)" lines=2`)
	})

	// Another minute later the next bad line is logged at once.
	clock.Store(now.Add(2 * time.Minute).UnixNano())
	appendTo(t, file, "{broken\n")
	r.synced(file)
	if n := strings.Count(r.log.String(), `msg="bad line skipped"`); n != 3 ||
		!strings.Contains(r.log.String(), `reason="not a JSON record (malformed or cut off)" lines=1`) {
		t.Errorf("want a third log line for the new bad line:\n%s", r.log)
	}
	if got := r.w.Stats().SkippedFiles[0].Lines; got != 4 {
		t.Errorf("lines skipped %d, want 4", got)
	}
}

// nextBatch reads the next batch of r's watcher whose epoch is at least epoch.
func nextBatch(t *testing.T, w *Watcher, epoch uint64) Batch {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case b := <-w.Batches():
			if b.Epoch >= epoch {
				return b
			}
		case <-deadline:
			t.Fatal("no batch")
		}
	}
}

// TestRewindReadsAgainFromTheAcknowledged: what the consumer did not
// acknowledge is handed out again after a Rewind, from the last
// acknowledged position, with a newer epoch; a removal of a snapshot file
// and the end of a first scan are reported again too.
func TestRewindReadsAgainFromTheAcknowledged(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	history := filepath.Join(root, "projects", "p", "old.jsonl")
	live := filepath.Join(root, "sessions", "7.json")
	appendTo(t, history, "history\n")
	appendTo(t, live, `{"pid":7}`)
	mkdir(t, filepath.Dir(file))
	src := firstLook(claudeSources(root))
	r := newRun(t, options(src))
	w := r.w

	first := nextBatch(t, w, 0)
	if !first.Ready || len(first.Records) != 2 {
		t.Fatalf("first batch %+v, want the end of the scan with a checkpoint and the snapshot", first)
	}
	// Not acknowledged: the first scan's end comes again.
	epoch := w.Rewind()
	again := nextBatch(t, w, epoch)
	if !again.Ready || again.Epoch != epoch || len(again.Records) != 2 {
		t.Fatalf("after a Rewind: %+v, want the end of the scan again", again)
	}
	w.Ack(again.Seq)

	appendTo(t, file, "a\nb\n")
	b := nextBatch(t, w, epoch)
	wantLinesText(t, b.Records, "a", "b")
	w.Ack(b.Seq)
	appendTo(t, file, "c\n")
	wantLinesText(t, nextBatch(t, w, epoch).Records, "c")
	if err := os.Remove(live); err != nil {
		t.Fatal(err)
	}
	gone := nextBatch(t, w, epoch)
	if len(gone.Records) != 1 || !gone.Records[0].Gone {
		t.Fatalf("removal batch %s", describe(gone.Records))
	}
	appendTo(t, file, "d\n")

	epoch = w.Rewind()
	var recs []Record
	for len(recs) < 3 {
		b := nextBatch(t, w, epoch)
		recs = append(recs, b.Records...)
		w.Ack(b.Seq)
	}
	var got []string
	for _, rec := range recs {
		switch {
		case rec.Gone:
			got = append(got, "gone "+filepath.Base(rec.Path))
		default:
			got = append(got, string(rec.Line))
		}
	}
	if strings.Join(got, "|") != "c|d|gone 7.json" {
		t.Fatalf("after the second Rewind: %q, want c, d and the removal again", got)
	}
	if recs[0].Offset != 4 {
		t.Errorf("c read again at %d, want 4", recs[0].Offset)
	}
	// Everything acknowledged: a Rewind reads nothing again.
	epoch = w.Rewind()
	appendTo(t, file, "e\n")
	wantLinesText(t, nextBatch(t, w, epoch).Records, "e")
}

// FuzzMarks: any stored mark parses without a panic and round-trips, and
// the mark of a line holds on a file that ends with that line.
func FuzzMarks(f *testing.F) {
	f.Add("12:00000000000000ab", []byte("x\nline"))
	f.Add("", []byte(""))
	f.Add("300:zz", bytes.Repeat([]byte("ab\n"), 200))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, stored string, data []byte) {
		if m := parseMark(stored); m.n > 0 && parseMark(m.markString()) != m {
			t.Fatalf("%q parses to %+v, which does not round-trip", stored, m)
		}
		line := data[bytes.LastIndexByte(data, '\n')+1:]
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, append(bytes.Clone(data), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		end := int64(len(data) + 1)
		if ok, _, err := markHolds(fh, end, end, lineMark(line), make([]byte, markLen)); err != nil || !ok {
			t.Fatalf("the mark of %q does not hold at the end of %q: %v", line, data, err)
		}
	})
}

// TestIdleFilesKeepOnlyTheirPosition: a file closed idle with everything
// stored keeps only its position and identity, and from that alone goes
// on where it was after an append, a copy of itself moved over it and a
// restart; it is read from its start after a truncation, a replacement and
// a rewrite with the same first bytes (docs/durability.md).
func TestIdleFilesKeepOnlyTheirPosition(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	head := strings.Repeat("h", 300)
	appendTo(t, file, head+"\none\n")
	opts := options(claudeSources(root))
	opts.IdleClose = 20 * time.Millisecond
	r := startStoring(t, opts)
	idle := func(step string) {
		t.Helper()
		if !r.cold(file) {
			t.Fatalf("%s: the idle file keeps the state of reading it", step)
		}
	}
	at := func(recs []Record, offset int64) {
		t.Helper()
		if recs[0].Offset != offset {
			t.Fatalf("%q read at %d, want %d", recs[0].Line, recs[0].Offset, offset)
		}
	}
	wantLinesText(t, r.records(2), head, "one")
	idle("first read")

	appendTo(t, file, "two\n")
	recs := r.records(1)
	wantLinesText(t, recs, "two")
	at(recs, int64(len(head)+5))
	idle("append")

	tmp := filepath.Join(root, "s.tmp")
	appendTo(t, tmp, head+"\none\ntwo\nthree\n")
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	recs = r.records(1)
	wantLinesText(t, recs, "three")
	at(recs, int64(len(head)+9))
	if !strings.Contains(r.log.String(), "replaced by the same content") {
		t.Errorf("the replacement is not logged:\n%s", r.log)
	}
	idle("the same content moved over it")

	// Rewritten in place, longer, with the same first bytes: the bytes
	// before the position changed.
	if err := os.WriteFile(file, []byte(head+"\nthe second version, longer than the first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	recs = r.records(2)
	wantLinesText(t, recs, head, "the second version, longer than the first")
	at(recs, 0)
	idle("rewrite")

	if err := os.Truncate(file, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, "x\n")
	recs = r.records(1)
	wantLinesText(t, recs, "x")
	at(recs, 0)
	idle("truncation")

	appendTo(t, tmp, "new1\nnew2\n")
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	recs = r.records(2)
	wantLinesText(t, recs, "new1", "new2")
	at(recs, 0)
	idle("replacement")
	pos := recs[1].Position()
	r.stop()

	opts.Positions = map[string]Position{file: pos}
	r = startStoring(t, opts)
	idle("restart")
	appendTo(t, file, "new3\n")
	recs = r.records(1)
	wantLinesText(t, recs, "new3")
	at(recs, 10)
	idle("append after the restart")
}

// A file the first look only stat-ed keeps only its position once that is
// stored: 20,000 files of history cost a cold record each
// (docs/performance.md §3).
func TestFirstLookFilesStayCold(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "{\"a\":1}\n{\"b\":2}\n")
	r := startStoring(t, options(firstLook(claudeSources(root))))
	if !r.cold(file) {
		t.Fatal("a file seen by the first look keeps the state of reading it")
	}
}

// TestRewindOpensTheStoredFileAgain: a Rewind goes back to a stored
// position whose file was replaced since and then put back at its path,
// unseen (no events: a scan-only watcher). The file held open is the one
// put in between; read again from the stored position, the file at the
// path gives nothing twice and its next line.
func TestRewindOpensTheStoredFileAgain(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	kept := filepath.Join(root, "kept")
	head := strings.Repeat("h", 300)
	appendTo(t, file, head+"\none\n")
	if err := os.Link(file, kept); err != nil {
		t.Fatal(err)
	}
	opts := options(claudeSources(root))
	opts.Events = EventsScan
	r := newRun(t, opts)
	w := r.w
	first := nextBatch(t, w, 0)
	wantLinesText(t, first.Records, head, "one")
	w.Ack(first.Seq)

	copyOf := filepath.Join(root, "copy")
	appendTo(t, copyOf, head+"\none\nonly in the copy\n")
	if err := os.Rename(copyOf, file); err != nil {
		t.Fatal(err)
	}
	w.Sync(file)
	wantLinesText(t, nextBatch(t, w, 0).Records, "only in the copy") // not acknowledged
	if err := os.Rename(kept, file); err != nil {
		t.Fatal(err)
	}

	epoch := w.Rewind()
	appendTo(t, file, "after\n")
	w.Sync(file)
	var got []Record
	for b := nextBatch(t, w, epoch); ; b = nextBatch(t, w, epoch) {
		got = append(got, b.Records...)
		if b.Synced == file {
			break
		}
	}
	var lines []string
	for _, rec := range got {
		if !rec.Checkpoint {
			lines = append(lines, string(rec.Line))
		}
	}
	if !slices.Equal(lines, []string{"after"}) {
		t.Fatalf("after the Rewind: lines %q, want only %q", lines, "after")
	}
}
