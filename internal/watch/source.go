package watch

import (
	"context"
	"os"
	"time"

	"nudge/internal/classify"
)

// A source is one way of reading a family of files, one per classify.FileKind
// (docs/agents/adding.md §3). The Watcher finds the files, sees them change,
// batches what they say and keeps their positions; a source reads one file
// that changed. Each source lives in its own file of this package: lines
// (read.go), snapshots (snapshot.go), OpenCode's database (opencode_db.go),
// a host queried on change (host.go) and wake-ups (opencode_live.go).
type source interface {
	// stamp is what a look compares to tell that the file at p, which fi
	// describes, changed.
	stamp(p string, fi os.FileInfo) (size int64, mtime time.Time)
	// read brings t up to date with its file, which fi describes.
	read(ctx context.Context, w *Watcher, t *tail, fi os.FileInfo)
	// positioned: what the file says has a position that is stored,
	// resumed on a restart and begun at its end in old history; a file
	// re-read whole has none.
	positioned() bool
	// lasting: the state of reading the file is kept while it is
	// followed, being more than a position; a file of lines drops it when
	// idle (tail.cool).
	lasting() bool
}

// A trigger is a source whose files are not followed: an event naming one
// only fires it.
type trigger interface {
	source
	fire(w *Watcher)
}

// A goneTeller is a source whose file's removal is reported (Record.Gone).
type goneTeller interface {
	source
	gone(ctx context.Context, w *Watcher, t *tail)
}

// sources reads each kind of file.
var sources = [...]source{
	classify.Lines:     linesSource{},
	classify.JSONLines: linesSource{json: true},
	classify.Snapshot:  snapshotSource{},
	classify.Database:  databaseSource{},
	classify.HostQuery: hostSource{},
	classify.Wake:      wakeSource{},
}

// fires tells whether set's files are a trigger's: a change of one fires
// it, with no look at the file.
func fires(set FileSet) bool {
	_, ok := sourceOf(set.Kind).(trigger)
	return ok
}

// sourceOf is the source of a kind of file.
func sourceOf(k classify.FileKind) source { return sources[k] }

// fileStamp is a plain file's stamp: its size and modification time.
func fileStamp(_ string, fi os.FileInfo) (int64, time.Time) { return fi.Size(), fi.ModTime() }
