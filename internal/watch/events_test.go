package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// The folder-level source hands out a change after a quiet moment at once,
// and the changes that follow within the latency together, each folder
// once, a latency after the last hand-out (FSEvents with NoDefer).
func TestCoalescerLeadingEdge(t *testing.T) {
	// In a bubble the latency passes on the bubble's clock, at once.
	synctest.Test(t, func(t *testing.T) {
		const latency = 2 * time.Second
		c := newCoalescer(latency)
		defer c.close()
		take := func(within time.Duration) ([]folderChange, time.Duration) {
			start := time.Now()
			select {
			case got := <-c.out:
				return got, time.Since(start)
			case <-time.After(within):
				return nil, time.Since(start)
			}
		}

		c.note(folderChange{Dir: "/a"})
		if got, _ := take(latency / 2); len(got) != 1 || got[0].Dir != "/a" {
			t.Fatalf("a lone change: %v within half the latency, want /a at once", got)
		}
		c.note(folderChange{Dir: "/b"})
		c.note(folderChange{Dir: "/c"})
		c.note(folderChange{Dir: "/b"})
		if got, _ := take(latency / 4); got != nil {
			t.Fatalf("changes right after a hand-out went out early: %v", got)
		}
		got, _ := take(2 * latency)
		if len(got) != 2 || got[0].Dir != "/b" || got[1].Dir != "/c" {
			t.Fatalf("changes within the latency: %v, want /b and /c together, each once", got)
		}
		time.Sleep(latency + latency/4) // quiet again
		c.note(folderChange{Dir: "/d"})
		if got, _ := take(latency / 2); len(got) != 1 || got[0].Dir != "/d" {
			t.Fatalf("a change after a quiet latency: %v, want /d at once", got)
		}
	})
}

// scannedFolderWatcher is a watcher of the Claude Code root with the
// folder-level design, its first scan done, not running: the test hands it
// the changes in the order it chooses.
func scannedFolderWatcher(t *testing.T, root string) (*Watcher, context.Context) {
	t.Helper()
	opts := options(claudeSources(root))
	opts.Events = EventsFolders
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	w.startEvents()
	t.Cleanup(func() { w.folders.Close() })
	ctx := context.Background()
	w.scanRoots(ctx)
	return w, ctx
}

// A watched folder removed and made again before the watcher looks (a sync
// tool putting a project back) is a new folder: the watcher drops the old
// one and watches the new, so what is written in it later is seen.
func TestFolderReplacedBeforeTheLook(t *testing.T) {
	root := t.TempDir()
	projects := filepath.Join(root, "projects")
	dir := filepath.Join(projects, "p")
	file := filepath.Join(dir, "s.jsonl")
	appendTo(t, file, "first\n")
	w, ctx := scannedFolderWatcher(t, root)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, "again\n")
	// The source says the old folder is gone (TestNotifySourceReportsAGoneFolder);
	// its parent's look may come first.
	w.handleFolders(ctx, []folderChange{{Dir: projects}, {Dir: dir, Gone: true}})
	if recs := w.batch.Records; len(recs) == 0 || string(recs[len(recs)-1].Line) != "again" || recs[len(recs)-1].Offset != 0 {
		t.Fatalf("records %v: want the new file read from its start", recs)
	}
	for drained := false; !drained; { // what the removal itself reported
		select {
		case <-w.folders.Changes():
		case <-time.After(200 * time.Millisecond):
			drained = true
		}
	}
	appendTo(t, file, "later\n")
	select {
	case changes := <-w.folders.Changes():
		if !slices.Contains(changes, folderChange{Dir: dir}) {
			t.Fatalf("changes %v: want %s", changes, dir)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a line written in the new folder: no change reported; its folder is not watched")
	}
}

// A root found gone when its folder is looked at, before the events of its
// own removal come, is waited for where it would appear: made again, its
// files are read.
func TestRootGoneBeforeItsEvents(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", ".claude")
	file := filepath.Join(root, "projects", "p", "s.jsonl")
	appendTo(t, file, "first\n")
	w, ctx := scannedFolderWatcher(t, root)

	if err := os.RemoveAll(filepath.Join(base, "home")); err != nil {
		t.Fatal(err)
	}
	w.handleFolders(ctx, []folderChange{{Dir: root}})
	appendTo(t, file, "again\n")
	deadline := time.After(5 * time.Second)
	for {
		if recs := w.batch.Records; len(recs) > 0 && string(recs[len(recs)-1].Line) == "again" {
			return
		}
		select {
		case changes := <-w.folders.Changes():
			w.handleFolders(ctx, changes)
		case <-deadline:
			t.Fatalf("the root made again: records %v, want its file read", w.batch.Records)
		}
	}
}
