package watch

import (
	"context"
	"os"
	"strings"
	"time"

	"nudge/internal/watch/agentdb"
	"nudge/internal/watch/opencode"
)

// A database tail (classify.Database) follows OpenCode's SQLite database: its
// records are the rows of the durable event log (docs/agents/opencode.md §2.1),
// each as one JSON line, and its position, kept in lines.pos and stored as
// Offset/End, is the rowid of the last row read. OpenCode commits into the
// -wal file; the main file changes only at checkpoints, so events naming
// either read the database.

// walSuffix names the write-ahead log next to a database (§2.1).
const walSuffix = "-wal"

// ownerName maps a database's -wal file to the database: a commit changes
// the -wal file only.
func (*databaseSource) ownerName(name string) (string, bool) {
	return strings.CutSuffix(name, walSuffix)
}

// databaseStamp is what a scan compares to tell a database changed: the
// main file and its -wal file together.
func databaseStamp(p string, main os.FileInfo) (size int64, mtime time.Time) {
	size, mtime = main.Size(), main.ModTime()
	if wal, err := os.Stat(p + walSuffix); err == nil {
		size += wal.Size()
		if wal.ModTime().After(mtime) {
			mtime = wal.ModTime()
		}
	}
	return size, mtime
}

// databaseSettle is how long after a change of a database it is read once
// more (databaseSource.read); a variable for tests.
var databaseSettle = 100 * time.Millisecond

// defers reports whether an event naming t's database waits for
// the look after it, keeping it for then: a database being written is read
// once per databaseSettle on its events, the commits meanwhile together,
// so its cost follows the rows read, not the commits (docs/performance.md
// §3). A read asked for (Sync) or due (a scan, the look after a change)
// reads at once.
func (d *databaseSource) defers(t *tail) bool {
	w := d.w
	if t.reading == nil {
		return false
	}
	next := t.dbRead.Add(databaseSettle)
	if !time.Now().Before(next) {
		return false
	}
	if at, ok := w.relook[t]; !ok || next.Before(at) {
		w.relook[t] = next
	}
	return true
}

// databaseSource reads OpenCode's SQLite database (classify.Database) row
// by row; its running processes' live streams are followed beside it
// (opencode_live.go).
type databaseSource struct {
	w    *Watcher
	live liveState
}

func (*databaseSource) stamp(p string, fi os.FileInfo) (int64, time.Time) {
	return databaseStamp(p, fi)
}
func (*databaseSource) positioned() bool { return true }
func (*databaseSource) lasting() bool    { return true }

// read emits the event rows written since t's position; fi describes the
// database file. One short read per call: the connection is closed before
// it returns, so no read transaction pins OpenCode's WAL (§2.1); what it
// learned of the WAL is kept for the next (agentdb.WAL), which reads only
// the frames committed since.
func (d *databaseSource) read(ctx context.Context, t *tail, fi os.FileInfo) {
	w := d.w
	d.wake() // an OpenCode process is at work: it may run a server
	t.dbRead = time.Now()
	dev, ino := fileKey(fi)
	size, mtime := databaseStamp(t.path, fi)
	if size != t.size || mtime.UnixNano() != t.mtime {
		// A commit is seen by readers a moment after its bytes land in the
		// WAL (the WAL index is updated last): a read on the change's event
		// can miss it, and no event follows. One more look settles it.
		w.relook[t] = time.Now().Add(databaseSettle)
	}
	t.size, t.mtime = size, mtime.UnixNano()
	if wal, err := opencode.InWAL(t.path); err != nil {
		w.problem(t.path, "cannot read database", err)
		return
	} else if !wal {
		// Not readable yet without getting in OpenCode's way; its switch
		// to WAL changes the file and brings it back here.
		w.log.Debug("OpenCode database not in WAL mode yet; not reading it", "path", t.path)
		return
	}
	if t.dbWAL == nil {
		t.dbWAL = new(agentdb.WAL)
	}
	db, err := opencode.Open(t.dbWAL, t.path)
	if err != nil {
		w.problem(t.path, "cannot open database", err)
		return
	}
	defer db.Close()
	last, err := opencode.Last(ctx, db.DB)
	if d.checkpointed(t, db) {
		return
	}
	if err != nil {
		w.problem(t.path, "cannot read database", err)
		return
	}
	w.recovered(t.path)
	switch {
	case t.atEnd:
		t.atEnd, t.checkpoint = false, true
		t.lines.reset(last)
	case t.known && (dev != t.dev || ino != t.ino):
		w.log.Info("database was replaced; reading it from the start", "path", t.path)
		t.lines.reset(0)
	case t.lines.pos > last:
		w.log.Info("database lost rows; reading it from the start", "path", t.path)
		t.lines.reset(0)
	}
	t.known, t.dev, t.ino = true, dev, ino
	if t.checkpoint && t.lastBatch == 0 {
		t.committed = commitPoint{offset: t.lines.pos, dev: dev, ino: ino, known: true}
	}
	t.used = time.Now()
	id := t.id()
	skipped := int64(0)
	for ctx.Err() == nil && t.lines.pos < last {
		rows, err := opencode.Events(ctx, db.DB, t.lines.pos, batchRecords)
		if d.checkpointed(t, db) {
			break
		}
		if err != nil {
			w.problem(t.path, "cannot read database", err)
			break
		}
		for _, r := range rows {
			t.lines.pos = r.RowID
			if d.live.covered[r.Session] > 0 {
				// A live stream reports this session: its records come
				// from there, and a second copy would read as a second
				// person typing.
				skipped = r.RowID
				continue
			}
			skipped = 0
			w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: id, Offset: r.RowID, End: r.RowID, Line: r.Line})
		}
		if len(rows) < batchRecords {
			break
		}
	}
	if skipped != 0 || t.checkpoint {
		// Store the position past the skipped rows, or where reading began.
		at := t.lines.pos
		w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: id, Offset: at, End: at, Checkpoint: true})
	}
}

// checkpointed reports whether OpenCode may have checkpointed during a
// read of db (agentdb.DB.Changed): what was read, or the error the read
// met, is then dropped, and t is read again a moment later.
func (d *databaseSource) checkpointed(t *tail, db *agentdb.DB) bool {
	w := d.w
	if !db.Changed() {
		return false
	}
	w.log.Debug("OpenCode database checkpointed during a read; reading it again", "path", t.path)
	w.relook[t] = time.Now().Add(databaseSettle)
	return true
}
