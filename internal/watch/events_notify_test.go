//go:build !(darwin || freebsd || openbsd || netbsd || dragonfly)

package watch

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// notifyWatcher is the inotify watcher of a folder-level source.
func notifyWatcher(s folderSource) *fsnotify.Watcher { return s.(*notifySource).fsw }

// A watched folder removed is reported gone, with its parent changed: its
// inotify watch went with it.
func TestNotifySourceReportsAGoneFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "p")
	mkdir(t, dir)
	s, err := newFolderSource(nil, 10*time.Millisecond, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range []string{parent, dir} {
		if err := s.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	got := map[folderChange]bool{}
	deadline := time.After(5 * time.Second)
	for !got[folderChange{Dir: dir, Gone: true}] || !got[folderChange{Dir: parent}] {
		select {
		case changes := <-s.Changes():
			for _, c := range changes {
				got[c] = true
			}
		case <-deadline:
			t.Fatalf("changes %v: want %s gone and %s changed", got, dir, parent)
		}
	}
}
