package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"nudge/internal/classify"
	"nudge/internal/testenv"
)

func TestDiscovery(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "/elsewhere/codex")
	if got := DefaultRoot("claude"); got != filepath.Join(home, ".claude") {
		t.Errorf("claude default root %q", got)
	}
	if got := DefaultRoot("codex"); got != "/elsewhere/codex" {
		t.Errorf("codex default root %q, want $CODEX_HOME", got)
	}
	if got := DefaultRoot("kimi_code"); got != filepath.Join(home, ".kimi-code") {
		t.Errorf("kimi_code default root %q", got)
	}
	if got := DefaultRoot("nobody"); got != "" {
		t.Errorf("unknown agent root %q, want empty", got)
	}
	got := Sources(map[string]string{"codex": "/x/codex/", "claude": "", "nobody": "/y"})
	if len(got) != 2 || got[0].Agent != "claude" || got[1].Agent != "codex" {
		t.Fatalf("sources %+v, want claude then codex", got)
	}
	if got[0].Root != filepath.Join(home, ".claude") || got[1].Root != "/x/codex" {
		t.Errorf("roots %q %q", got[0].Root, got[1].Root)
	}
	want := []FileSet{{Pattern: "projects/*/*.jsonl", Kind: classify.JSONLines}, {Pattern: "sessions/*.json", Kind: classify.Snapshot}}
	if !slices.Equal(got[0].Files, want) {
		t.Errorf("claude files %+v, want %+v", got[0].Files, want)
	}
}

func TestNewRejectsBadSources(t *testing.T) {
	for _, s := range []Source{
		{Agent: "", Root: "/r", Files: []FileSet{{Pattern: "a/*.jsonl"}}},
		{Agent: "a", Root: "", Files: []FileSet{{Pattern: "a/*.jsonl"}}},
		{Agent: "a", Root: "/r", Files: []FileSet{{Pattern: "/abs/*.jsonl"}}},
		{Agent: "a", Root: "/r", Files: []FileSet{{Pattern: "a/../b"}}},
		{Agent: "a", Root: "/r", Files: []FileSet{{Pattern: "a/[x"}}},
		{Agent: "a", Root: "/r", Files: []FileSet{{Pattern: "a/*.db", Kind: classify.FileKind(len(classify.FileKinds()))}}},
		{Agent: "a", Root: "/r", Files: []FileSet{{Pattern: "a/*.jsonl", Kind: classify.HostQuery}}},
	} {
		if _, err := New(Options{Sources: []Source{s}}); err == nil {
			t.Errorf("New accepted %+v", s)
		}
	}
}

func TestCompleteLinesInOrder(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "-home-dev-p", "s1.jsonl")
	mkdir(t, filepath.Dir(file))
	r := startRun(t, options(claudeSources(root)))

	appendTo(t, file, "a\nbb\npar")
	recs := r.records(2)
	wantLinesText(t, recs, "a", "bb")
	if recs[0].Offset != 0 || recs[0].End != 2 || recs[1].Offset != 2 || recs[1].End != 5 {
		t.Errorf("offsets %d-%d %d-%d, want 0-2 2-5", recs[0].Offset, recs[0].End, recs[1].Offset, recs[1].End)
	}
	if recs[0].Agent != "claude" || recs[0].Path != file || recs[0].File.Inode == 0 || recs[0].File.Fingerprint == "" {
		t.Errorf("record %+v", recs[0])
	}
	wantLinesText(t, r.synced(file)) // the partial line waits

	appendTo(t, file, "tial\n")
	recs = r.records(1)
	wantLinesText(t, recs, "partial")
	if recs[0].Offset != 5 || recs[0].End != 13 {
		t.Errorf("partial line at %d-%d, want 5-13", recs[0].Offset, recs[0].End)
	}
	// Many appends, few events: every line still comes, once.
	var want []string
	for i := range 500 {
		want = append(want, fmt.Sprint("line ", i))
		appendTo(t, file, want[i]+"\n")
	}
	wantLinesText(t, r.records(500), want...)
	wantLinesText(t, r.synced(file))

	// One write of more than is read with the bytes before the position.
	want, block := nil, ""
	for i := 0; len(block) <= 3*readBuffer; i++ {
		want = append(want, fmt.Sprint(i, " ", strings.Repeat("x", i%700)))
		block += want[i] + "\n"
	}
	appendTo(t, file, block)
	wantLinesText(t, r.records(len(want)), want...)
}

func TestWatchesFoldersOnly(t *testing.T) {
	root := t.TempDir()
	mkdir(t, filepath.Join(root, "projects", "p1"))
	mkdir(t, filepath.Join(root, "projects", "p1", "s1", "subagents")) // not a level the patterns reach
	mkdir(t, filepath.Join(root, "sessions"))
	mkdir(t, filepath.Join(root, "other"))
	appendTo(t, filepath.Join(root, "projects", "p1", "s1.jsonl"), "x\n")
	r := startRun(t, options(claudeSources(root)))

	want := []string{root, filepath.Join(root, "projects"), filepath.Join(root, "projects", "p1"), filepath.Join(root, "sessions")}
	watched := func() []string {
		l := folderWatcher(r.w).WatchList()
		slices.Sort(l)
		return l
	}
	slices.Sort(want)
	if got := watched(); !slices.Equal(got, want) {
		t.Fatalf("watches %q, want the folders %q", got, want)
	}
	p2 := filepath.Join(root, "projects", "p2")
	mkdir(t, p2)
	eventually(t, "a watch on the new folder", func() bool { return slices.Contains(watched(), p2) })
}

func TestNewFoldersAreScannedAtOnce(t *testing.T) {
	base := t.TempDir()
	claudeRoot, codexRoot := filepath.Join(base, "claude"), filepath.Join(base, "codex")
	mkdir(t, filepath.Join(claudeRoot, "projects"))
	mkdir(t, codexRoot)
	r := startRun(t, options(anyLine(Sources(map[string]string{"claude": claudeRoot, "codex": codexRoot}))))

	// A folder moved in with a file already inside: only the folder has an event.
	staged := filepath.Join(base, "staging", "-p9")
	appendTo(t, filepath.Join(staged, "s9.jsonl"), "moved in\n")
	if err := os.Rename(staged, filepath.Join(claudeRoot, "projects", "-p9")); err != nil {
		t.Fatal(err)
	}
	recs := r.records(1)
	wantLinesText(t, recs, "moved in")
	if recs[0].Agent != "claude" {
		t.Errorf("agent %q", recs[0].Agent)
	}

	// Codex's date folders, created in one go with the file right after.
	rollout := filepath.Join(codexRoot, "sessions", "2026", "05", "01", "rollout-2026-05-01T10-00-00-abc.jsonl")
	appendTo(t, rollout, "{\"type\":\"session_meta\"}\n")
	recs = r.records(1)
	wantLinesText(t, recs, `{"type":"session_meta"}`)
	if recs[0].Agent != "codex" || recs[0].Path != rollout {
		t.Errorf("record %+v", recs[0])
	}
}

func TestRootThatAppearsLater(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", "dev", ".claude")
	r := startRun(t, options(claudeSources(root)))

	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "first\n")
	wantLinesText(t, r.records(1), "first")

	// The root goes away and comes back: the new file is read from its start.
	if err := os.RemoveAll(filepath.Join(base, "home")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the file forgotten", func() bool { return r.w.Stats().FilesWatched == 0 })
	appendTo(t, file, "again\n")
	recs := r.records(1)
	wantLinesText(t, recs, "again")
	if recs[0].Offset != 0 {
		t.Errorf("offset %d, want 0", recs[0].Offset)
	}
}

func TestFolderProblemsDoNotStopWatching(t *testing.T) {
	root := t.TempDir()
	projects := filepath.Join(root, "projects")
	mkdir(t, projects)
	if err := os.Symlink("loop", filepath.Join(projects, "loop")); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(projects, "locked")
	appendTo(t, filepath.Join(locked, "s.jsonl"), "hidden\n")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	_, lockedErr := os.ReadDir(locked) // root reads it anyway
	r := startRun(t, options(claudeSources(root)))

	good := filepath.Join(projects, "good", "s.jsonl")
	appendTo(t, good, "seen\n")
	recs := r.synced(good)
	if !slices.Contains(lines(recs), "seen") {
		t.Fatalf("lines %q, want the good folder's line", lines(recs))
	}
	logs := r.log.String()
	if !strings.Contains(logs, "cannot follow link") {
		t.Errorf("no log of the link loop:\n%s", logs)
	}
	if lockedErr != nil && !strings.Contains(logs, "cannot read folder") {
		t.Errorf("no log of the unreadable folder:\n%s", logs)
	}

	// A loop made while watching is logged too, from its event alone.
	later := filepath.Join(projects, "later")
	if err := os.Symlink("later", later); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new loop logged", func() bool {
		return strings.Contains(r.log.String(), `msg="cannot follow link" path=`+later)
	})
}

func TestEventOverflowRescans(t *testing.T) {
	testenv.Slow(t)
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "p")
	appendTo(t, filepath.Join(dir, "a.jsonl"), "A\n")
	r := newRun(t, options(claudeSources(root)))
	// Nobody reads Batches yet: the watcher is stuck sending "A" while the
	// kernel's event queue overflows.
	queue := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		fmt.Sscan(string(b), &queue)
	}
	eventually(t, "the first scan to watch the folder", func() bool {
		return r.w.Stats().FilesOpen == 1 // a.jsonl is open: its folder is watched
	})
	for i := range queue + 4096 + 1000 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint("noise-", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	b := filepath.Join(dir, "b.jsonl")
	appendTo(t, b, "B\n")

	var got []Record
	deadline := time.After(3 * wait)
	for len(got) < 2 {
		select {
		case batch := <-r.w.Batches():
			got = append(got, batch.Records...)
		case <-deadline:
			t.Fatalf("got %s; the overflow did not rescan", describe(got))
		}
	}
	wantLinesText(t, got, "A", "B")
	if !strings.Contains(r.log.String(), "overflowed") {
		t.Errorf("no overflow logged; the test did not overflow the queue")
	}
}

func TestLongLinesAreSkipped(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	mkdir(t, filepath.Dir(file))
	opts := options(claudeSources(root))
	opts.LineCap = 1024
	r := startRun(t, opts)

	appendTo(t, file, "a\n")
	wantLinesText(t, r.records(1), "a")
	// The long line arrives in pieces, each read before the next is written.
	for range 5 {
		appendTo(t, file, strings.Repeat("x", 600))
		wantLinesText(t, r.synced(file))
	}
	appendTo(t, file, "\nb\n")
	recs := r.records(1)
	wantLinesText(t, recs, "b")
	if recs[0].Offset != 2+3000+1 {
		t.Errorf("b at %d, want %d", recs[0].Offset, 2+3000+1)
	}
	if got := r.w.Stats().LinesSkipped; got != 1 {
		t.Errorf("LinesSkipped %d, want 1", got)
	}
	if !strings.Contains(r.log.String(), `msg="bad line skipped"`) || !strings.Contains(r.log.String(), "longer than the cap (3001 bytes, cap 1024)") {
		t.Errorf("skip not logged:\n%s", r.log.String())
	}
}

func TestTruncatedFileStartsOver(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "one\ntwo\n")
	r := startRun(t, options(claudeSources(root)))
	wantLinesText(t, r.records(2), "one", "two")

	if err := os.Truncate(file, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, "3\n")
	recs := r.records(1)
	wantLinesText(t, recs, "3")
	if recs[0].Offset != 0 {
		t.Errorf("offset %d after truncation, want 0", recs[0].Offset)
	}

	// Rewritten in place, longer than before: the first bytes changed.
	if err := os.WriteFile(file, []byte("ONE\nTWO\nTHREE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs = r.records(3)
	wantLinesText(t, recs, "ONE", "TWO", "THREE")
	if recs[0].Offset != 0 {
		t.Errorf("offset %d after rewrite, want 0", recs[0].Offset)
	}
}

func TestReplacedFileStartsOver(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "old line that is long\n")
	r := startRun(t, options(claudeSources(root)))
	old := r.records(1)[0]

	tmp := filepath.Join(root, "projects", "p", "s.tmp")
	if err := os.WriteFile(tmp, []byte("new1\nnew2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	recs := r.records(2)
	wantLinesText(t, recs, "new1", "new2")
	if recs[0].Offset != 0 || recs[0].File.Inode == old.File.Inode {
		t.Errorf("replacement read at %d with inode %d (old %d)", recs[0].Offset, recs[0].File.Inode, old.File.Inode)
	}
}

func TestDeletedFileIsForgotten(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "one\n")
	r := startRun(t, options(claudeSources(root)))
	wantLinesText(t, r.records(1), "one")
	if got := r.w.Stats().FilesWatched; got != 1 {
		t.Fatalf("FilesWatched %d, want 1", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the file forgotten", func() bool { s := r.w.Stats(); return s.FilesWatched == 0 && s.FilesOpen == 0 })
	appendTo(t, file, "two\n")
	recs := r.records(1)
	wantLinesText(t, recs, "two")
	if recs[0].Offset != 0 {
		t.Errorf("offset %d, want 0", recs[0].Offset)
	}
}

func TestFirstRunSkipsOldHistory(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "projects", "p", "old.jsonl")
	appendTo(t, old, "history 1\nhistory 2\nbeing writ")
	opts := options(firstLook(claudeSources(root)))
	r := startRun(t, opts)
	wantLinesText(t, r.synced(old))

	appendTo(t, old, "ten\nnew\n")
	wantLinesText(t, r.records(2), "being written", "new")

	// The new file arrives whole (moved in), so its first look already sees content.
	created := filepath.Join(root, "projects", "p", "new.jsonl")
	staged := filepath.Join(t.TempDir(), "new.jsonl")
	appendTo(t, staged, "from the start\n")
	if err := os.Rename(staged, created); err != nil {
		t.Fatal(err)
	}
	recs := r.records(1)
	wantLinesText(t, recs, "from the start")
	if recs[0].Offset != 0 {
		t.Errorf("a file created after start read from %d", recs[0].Offset)
	}
}

func TestRestartResumesFromPositions(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "old\n")
	opts := options(firstLook(claudeSources(root)))
	first := startRun(t, opts)
	appendTo(t, file, "new1\n")
	rec := first.records(1)[0]
	first.stop()
	pos := Position{Path: file, File: rec.File, Offset: rec.End}

	appendTo(t, file, "new2\n") // while stopped
	other := filepath.Join(root, "projects", "p", "other.jsonl")
	appendTo(t, other, "o1\n") // a file that appeared since the last run

	resume := func(p Position) *run {
		opts := options(claudeSources(root))
		opts.Positions = map[string]Position{file: p}
		return startRun(t, opts)
	}
	r := resume(pos)
	wantLinesText(t, r.synced(file), "o1", "new2") // folder order: other.jsonl, then s.jsonl
	r.stop()
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}

	changed := pos
	changed.File.Fingerprint = fingerprintOf([]byte("different first line\n")).String()
	r = resume(changed)
	wantLinesText(t, r.synced(file), "old", "new1", "new2")
	r.stop()

	// The same content under another inode (a copy moved over it) goes on
	// where it was.
	moved := pos
	moved.File.Inode++
	r = resume(moved)
	wantLinesText(t, r.synced(file), "new2")
	r.stop()

	// A stored position past the end: the file was truncated while stopped.
	past := pos
	past.Offset = 1 << 20
	r = resume(past)
	wantLinesText(t, r.synced(file), "old", "new1", "new2")
}

func TestOpenFilesAreBounded(t *testing.T) {
	root := t.TempDir()
	opts := options(claudeSources(root))
	opts.MaxOpen = 2
	opts.IdleClose = 100 * time.Millisecond
	mkdir(t, filepath.Join(root, "projects", "p"))
	r := startRun(t, opts)

	var files []string
	for i := range 5 {
		files = append(files, filepath.Join(root, "projects", "p", fmt.Sprint("s", i, ".jsonl")))
		appendTo(t, files[i], fmt.Sprint("line ", i, "\n"))
		wantLinesText(t, r.records(1), fmt.Sprint("line ", i))
		if open := r.w.Stats().FilesOpen; open > 2 {
			t.Fatalf("%d files open, MaxOpen 2", open)
		}
	}
	eventually(t, "idle files closed", func() bool { return r.w.Stats().FilesOpen == 0 })
	appendTo(t, files[0], "after idle\n")
	wantLinesText(t, r.records(1), "after idle")
	if s := r.w.Stats(); s.FilesWatched != 5 {
		t.Errorf("FilesWatched %d, want 5", s.FilesWatched)
	}
}

func TestSnapshotFiles(t *testing.T) {
	root := t.TempDir()
	live := filepath.Join(root, "sessions", "555.json")
	appendTo(t, live, `{"pid":555,"status":"busy"}`)
	opts := options(firstLook(claudeSources(root))) // a snapshot is state, not history: it is reported anyway
	gone := filepath.Join(root, "sessions", "444.json")
	opts.Positions = map[string]Position{gone: {Path: gone, File: FileID{Inode: 9}, Offset: 20}, live: {Path: live, Offset: 27}}
	r := startRun(t, opts)

	recs := r.records(2)
	if recs[0].Path != live || string(recs[0].Line) != `{"pid":555,"status":"busy"}` || recs[0].Offset != 0 || recs[0].End != 27 {
		t.Errorf("first record %+v, want the whole of %s", recs[0], live)
	}
	if !recs[1].Gone || recs[1].Path != gone || recs[1].Line != nil || recs[1].File.Inode != 9 {
		t.Errorf("second record %+v, want the removal of %s, gone while stopped", recs[1], gone)
	}

	if err := os.WriteFile(live, []byte(`{"pid":555,"status":"busy"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLinesText(t, r.synced(live)) // same content: nothing
	if err := os.WriteFile(live, []byte(`{"pid":555,"status":"waiting"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantLinesText(t, r.records(1), `{"pid":555,"status":"waiting"}`)

	if err := os.Remove(live); err != nil {
		t.Fatal(err)
	}
	recs = r.records(1)
	if !recs[0].Gone || recs[0].Path != live || recs[0].Line != nil {
		t.Errorf("record %+v, want the removal of %s", recs[0], live)
	}
}

func TestSyncReadsBeforeAnswering(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	mkdir(t, filepath.Dir(file))
	// With no folder events and no scan in time, Sync alone reads the file.
	opts := options(claudeSources(root))
	opts.Events = EventsScan
	r := startRun(t, opts)
	for i := range 20 {
		appendTo(t, file, fmt.Sprint(i, "\n"))
		if recs := r.synced(file); len(recs) != 1 || string(recs[0].Line) != fmt.Sprint(i) {
			t.Fatalf("sync %d: got %s", i, describe(recs))
		}
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	appendTo(t, outside, "not a session\n")
	wantLinesText(t, r.synced(outside))
}

// Without folder events, scans every Rescan find what changed.
func TestScanEvents(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, ".claude")
	opts := options(claudeSources(root))
	opts.Events, opts.Rescan = EventsScan, 50*time.Millisecond
	r := startRun(t, opts)
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "found by a scan\n")
	wantLinesText(t, r.records(1), "found by a scan")
	appendTo(t, file, "and again\n")
	wantLinesText(t, r.records(1), "and again")
	if r.w.fsw != nil || r.w.folders != nil {
		t.Error("a scan-only watcher made folder watches")
	}
}

func TestChmodIsIgnored(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "x\n")
	w, err := New(options(claudeSources(root)))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range w.out {
		}
	}()
	t.Cleanup(func() { close(w.out) })
	ctx := context.Background()
	w.handle(ctx, fsnotify.Event{Name: file, Op: fsnotify.Chmod})
	if len(w.tails) != 0 {
		t.Fatal("a chmod event made the watcher read")
	}
	w.handle(ctx, fsnotify.Event{Name: file, Op: fsnotify.Write | fsnotify.Chmod})
	if len(w.tails) != 1 {
		t.Fatal("a write event was not read")
	}
	w.closeAll()
}

func TestRunClosesEverything(t *testing.T) {
	root := t.TempDir()
	appendTo(t, filepath.Join(root, "projects", "p", "s.jsonl"), "x\n")
	r := startRun(t, options(claudeSources(root)))
	r.records(1)
	r.stop()
	if _, ok := <-r.batches; ok {
		t.Error("Batches still open after Run returned")
	}
	if err := folderWatcher(r.w).Add(root); !errors.Is(err, fsnotify.ErrClosed) {
		t.Errorf("folder watcher still open: Add returned %v", err)
	}
	if s := r.w.Stats(); s.FilesOpen != 0 {
		t.Errorf("%d files open after Run returned", s.FilesOpen)
	}
	if err := r.w.Run(context.Background()); err == nil {
		t.Error("a second Run was accepted")
	}
}

// TestFolderLevelDesign runs the watcher's tests again with changes named
// only by their folder and gathered over a latency, as FSEvents reports
// them on macOS (docs/mac.md).
func TestFolderLevelDesign(t *testing.T) {
	testenv.Slow(t)
	events = EventsFolders
	defer func() { events = EventsAuto }()
	for name, test := range map[string]func(*testing.T){
		"CompleteLinesInOrder": TestCompleteLinesInOrder, "WatchesFoldersOnly": TestWatchesFoldersOnly,
		"NewFoldersAreScannedAtOnce": TestNewFoldersAreScannedAtOnce, "RootThatAppearsLater": TestRootThatAppearsLater,
		"FolderProblemsDoNotStopWatching": TestFolderProblemsDoNotStopWatching, "LongLinesAreSkipped": TestLongLinesAreSkipped,
		"TruncatedFileStartsOver": TestTruncatedFileStartsOver, "ReplacedFileStartsOver": TestReplacedFileStartsOver,
		"DeletedFileIsForgotten": TestDeletedFileIsForgotten, "FirstRunSkipsOldHistory": TestFirstRunSkipsOldHistory,
		"RestartResumesFromPositions": TestRestartResumesFromPositions, "OpenFilesAreBounded": TestOpenFilesAreBounded,
		"SnapshotFiles": TestSnapshotFiles, "FirstLookStoresEveryPosition": TestFirstLookStoresEveryPosition,
		"DeferredIdentityIsTakenAtTheFirstChange": TestDeferredIdentityIsTakenAtTheFirstChange,
		"SameContentUnderANewInodeGoesOn":         TestSameContentUnderANewInodeGoesOn, "SameHeadRewriteIsReadAgain": TestSameHeadRewriteIsReadAgain,
		"BadLinesAreCountedAndLogged": TestBadLinesAreCountedAndLogged, "RewindReadsAgainFromTheAcknowledged": TestRewindReadsAgainFromTheAcknowledged,
		"OpenCodeDatabaseRows": TestOpenCodeDatabaseRows, "OpenCodeLogWakesTheSearch": TestOpenCodeLogWakesTheSearch,
		"RunClosesEverything": TestRunClosesEverything, "HeldOpenFileReadsOnAfterItsMark": TestHeldOpenFileReadsOnAfterItsMark,
		"BatchLinesHoldUntilReleased": TestBatchLinesHoldUntilReleased,
	} {
		t.Run(name, test)
	}
}

// TestStatAll: every file's stat, in order, however many threads take
// them; a link that leads out of the folder is followed as well.
func TestStatAll(t *testing.T) {
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "target")
	var names []string
	for i := range 300 {
		name := fmt.Sprint(i)
		switch {
		case i%7 == 0: // missing
		case i == 100: // a link out of the folder, to a file of i bytes
			if err := os.WriteFile(outside, make([]byte, i), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(filepath.Join(dir, name), make([]byte, i), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		names = append(names, name)
	}
	for _, n := range []int{0, 1, 63, 64, 65, 300} {
		got := statAll(dir, names[:n])
		if len(got) != n {
			t.Fatalf("%d files: %d stats", n, len(got))
		}
		for i, st := range got {
			switch {
			case i%7 == 0 && !errors.Is(st.err, fs.ErrNotExist):
				t.Errorf("%s: err %v, want not found", names[i], st.err)
			case i%7 != 0 && (st.err != nil || st.fi.Size() != int64(i)):
				t.Errorf("%s: %v, %v; want a file of %d bytes", names[i], st.fi, st.err, i)
			}
		}
	}
}

// TestEveryKindHasASource holds a Watcher's sources to classify.FileKinds:
// a kind of file with no source would be read by none.
func TestEveryKindHasASource(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := classify.FileKinds()
	if len(kinds) != len(w.sources) {
		t.Errorf("%d kinds of file, %d sources", len(kinds), len(w.sources))
	}
	for _, k := range kinds {
		if w.sourceOf(k) == nil {
			t.Errorf("kind %s has no source", k)
		}
	}
}
