package watch

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// snapshotSource reads files that are one record each, rewritten whole
// (classify.Snapshot: Claude's live registry): the whole content is
// emitted when it differs from the last emitted, and a removal is told.
type snapshotSource struct{ w *Watcher }

func (snapshotSource) stamp(p string, fi os.FileInfo) (int64, time.Time) { return fileStamp(p, fi) }
func (snapshotSource) positioned() bool                                  { return false }
func (snapshotSource) lasting() bool                                     { return true }

// read emits the whole content of t's file, which fi describes, when it
// differs from the last content emitted. An empty file is one being
// written: it waits.
func (s snapshotSource) read(ctx context.Context, t *tail, fi os.FileInfo) {
	w := s.w
	open, ok := w.openHeld(ctx, t, fi)
	if !ok {
		return
	}
	size := open.Size()
	t.size, t.mtime = size, open.ModTime().UnixNano()
	if size > int64(w.opts.LineCap) {
		w.skipped(t, 0, capReason(size, w.opts.LineCap))
		return
	}
	buf := make([]byte, size)
	n, err := t.f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		w.problem(t.path, "cannot read file", err)
		return
	}
	buf = buf[:n]
	dev, ino := fileKey(open)
	t.known, t.dev, t.ino, t.fp = true, dev, ino, fingerprintOf(buf[:min(n, fingerprintLen)])
	sum := fingerprintOf(buf).sum
	t.used = time.Now()
	if n == 0 || t.emitted && sum == t.content {
		return
	}
	t.emitted, t.content = true, sum
	w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: t.id(), End: int64(n), Line: buf})
}

// gone tells that t's file, once emitted, was removed.
func (s snapshotSource) gone(ctx context.Context, t *tail) {
	w := s.w
	if t.reading != nil && t.emitted {
		w.emitGone(ctx, Record{Agent: t.agent, Path: t.path, File: t.id(), Gone: true})
	}
}
