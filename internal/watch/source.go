package watch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"nudge/internal/classify"
)

// A source is one way of reading a family of files, one per
// classify.FileKind (docs/agents/adding.md §3). The Watcher finds the
// files, sees them change, batches what they say and keeps their
// positions; a source reads one file that changed, for its Watcher. Each
// source lives in its own file of this package: lines (read.go), snapshots
// (snapshot.go), OpenCode's database and live streams (opencode_db.go,
// opencode_live.go), a host queried on change (host.go).
type source interface {
	// stamp is what a look compares to tell that the file at p, which fi
	// describes, changed.
	stamp(p string, fi os.FileInfo) (size int64, mtime time.Time)
	// read brings t up to date with its file, which fi describes.
	read(ctx context.Context, t *tail, fi os.FileInfo)
	// positioned: what the file says has a position that is stored,
	// resumed on a restart and begun at its end in old history; a file
	// re-read whole has none.
	positioned() bool
	// lasting: the state of reading the file is kept while it is
	// followed, being more than a position; a file of lines drops it when
	// idle (tail.cool).
	lasting() bool
}

// Optional parts of a source, each asserted where it is used.
type (
	// A trigger's files are not followed: an event naming one only fires it.
	trigger interface{ fire() }
	// A goneTeller reports its file's removal (Record.Gone).
	goneTeller interface {
		gone(ctx context.Context, t *tail)
	}
	// A deferrer may hold the read an event asks for until a look due
	// later, reading many changes at once (it keeps that look due).
	deferrer interface{ defers(t *tail) bool }
	// A companion's files have files beside them that stand for them (a
	// database's -wal): ownerName maps such a name to its file's.
	companion interface {
		ownerName(name string) (string, bool)
	}
	// A rooter takes each root whose files it reads, when the Watcher is made.
	rooter interface{ addRoot(r *root, set FileSet) }
	// A runner works beside the Watcher's loop while it runs (w.streams).
	runner interface{ run(ctx context.Context) }
	// A closer lets go of what it holds when the Watcher stops.
	closer interface{ close() }
	// A stucker names what of it cannot be read now, for Stats.
	stucker interface{ stuck() []Stuck }
)

// newSources makes w's source of each kind of file.
func newSources(w *Watcher) map[classify.FileKind]source {
	db := &databaseSource{w: w, live: newLiveState()}
	return map[classify.FileKind]source{
		classify.Lines:     linesSource{w: w},
		classify.JSONLines: linesSource{w: w, json: true},
		classify.Snapshot:  snapshotSource{w: w},
		classify.Database:  db,
		classify.HostQuery: &hostSource{w: w},
		classify.Wake:      wakeSource{db: db},
	}
}

// sourceOf is w's source of a kind of file.
func (w *Watcher) sourceOf(k classify.FileKind) source { return w.sources[k] }

// fires tells whether set's files are a trigger's: a change of one fires
// it, with no look at the file.
func (w *Watcher) fires(set FileSet) bool {
	_, ok := w.sourceOf(set.Kind).(trigger)
	return ok
}

// defers tells whether t's source holds the read an event of t asks for.
func (w *Watcher) defers(t *tail) bool {
	d, ok := t.src.(deferrer)
	return ok && d.defers(t)
}

// ownerOf maps the change of a file that stands for a followed one (a
// database's -wal) to the followed file and its set.
func (w *Watcher) ownerOf(r *root, name string, rel []string) (string, FileSet, bool) {
	if len(rel) == 0 {
		return "", FileSet{}, false
	}
	for _, src := range w.sources {
		c, ok := src.(companion)
		if !ok {
			continue
		}
		owner, ok := c.ownerName(name)
		if !ok {
			continue
		}
		orel := append(rel[:len(rel)-1:len(rel)-1], filepath.Base(owner))
		if set, ok := r.fileSet(orel); ok && w.sourceOf(set.Kind) == src {
			return owner, set, true
		}
	}
	return "", FileSet{}, false
}

// postBuffer is how many posts may wait for the loop (a burst of live
// events) before a source's goroutine waits.
const postBuffer = 256

// post hands f to the Watcher's loop, which runs it between events; it
// waits while postBuffer posts wait, or until ctx ends.
func (w *Watcher) post(ctx context.Context, f func(context.Context)) {
	select {
	case w.posts <- f:
	case <-ctx.Done():
	}
}

// fileStamp is a plain file's stamp: its size and modification time.
func fileStamp(_ string, fi os.FileInfo) (int64, time.Time) { return fi.Size(), fi.ModTime() }
