package watch

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// visit follows the file at p, reading it when it is new, when force is set
// (an event named it), or when its size, time or inode changed since the last
// look. A Wake file is not followed: an event naming it wakes the search for
// live servers.
func (w *Watcher) visit(ctx context.Context, r *root, p string, set FileSet, force bool) {
	if set.Wake {
		if force {
			w.wakeLive()
		}
		return
	}
	t := w.tails[p]
	if t != nil && force {
		t.seen = w.gen
		w.read(ctx, t)
		return
	}
	fi, ok := w.look(ctx, p, t)
	if !ok {
		return
	}
	if t == nil {
		t = w.track(r, p, set)
	} else {
		dev, ino := fileKey(fi)
		size, mtime := fi.Size(), fi.ModTime()
		if t.database {
			size, mtime = databaseStamp(p, fi)
		}
		if size == t.size && mtime.Equal(t.mtime) && dev == t.dev && ino == t.ino {
			t.seen = w.gen
			return
		}
	}
	t.seen = w.gen
	w.readFile(ctx, t, fi)
}

// look stats the file at p. ok is false when it cannot be looked at (the
// problem is logged) or is no regular file any more (t, if followed, is
// forgotten).
func (w *Watcher) look(ctx context.Context, p string, t *tail) (fi os.FileInfo, ok bool) {
	fi, err := os.Stat(p)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		w.problem(p, "cannot look at file", err)
		return nil, false
	case err != nil || !fi.Mode().IsRegular():
		if t != nil {
			w.forget(ctx, t)
		}
		return nil, false
	}
	return fi, true
}

// track starts following the file at p: from its stored position, from its
// end (a first run's old history), or from its start.
func (w *Watcher) track(r *root, p string, set FileSet) *tail {
	t := &tail{agent: r.Agent, path: p, snapshot: set.Snapshot, database: set.Database, host: set.Host != "", lines: lineSplitter{max: w.opts.LineCap}}
	t.lines.onSkip = func(start, end int64) {
		w.nSkipped.Add(1)
		w.log.Warn("line longer than the cap skipped", "path", p, "offset", start, "bytes", end-start, "cap", w.opts.LineCap)
	}
	if pos, ok := w.opts.Positions[p]; ok && !set.Snapshot {
		t.known, t.dev, t.ino = true, pos.File.Dev, pos.File.Inode
		t.fp = parseFingerprint(pos.File.Fingerprint)
		t.lines.reset(max(pos.Offset, 0))
	} else if w.initial && w.opts.FirstRun && !set.Snapshot {
		t.atEnd = true
	}
	w.tails[p] = t
	w.changes++
	w.nWatched.Store(int64(len(w.tails)))
	return t
}

// forget stops following t, whose file is gone; a snapshot reports it.
func (w *Watcher) forget(ctx context.Context, t *tail) {
	w.close(t)
	delete(w.tails, t.path)
	delete(w.problems, t.path)
	w.changes++
	w.nWatched.Store(int64(len(w.tails)))
	if t.snapshot && t.emitted {
		w.emit(ctx, Record{Agent: t.agent, Path: t.path, File: t.id(), Gone: true})
	}
}

// read brings t up to date with its file.
func (w *Watcher) read(ctx context.Context, t *tail) {
	if fi, ok := w.look(ctx, t.path, t); ok {
		w.readFile(ctx, t, fi)
	}
}

// readFile brings t up to date with its file, which fi describes: it
// notices replacement and truncation, then emits what was added.
func (w *Watcher) readFile(ctx context.Context, t *tail, fi os.FileInfo) {
	if t.database {
		w.readDatabase(ctx, t, fi)
		return
	}
	if t.host {
		w.askHost(ctx, t, fi)
		return
	}
	var open os.FileInfo
	if t.f != nil {
		if o, err := t.f.Stat(); err == nil && os.SameFile(fi, o) {
			open = o
		} else {
			w.close(t)
		}
	}
	if t.f == nil {
		f, err := os.Open(t.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.forget(ctx, t)
			return
		case err != nil:
			w.problem(t.path, "cannot open file", err)
			return
		}
		delete(w.problems, t.path)
		w.hold(t, f)
		if open, err = t.f.Stat(); err != nil {
			w.problem(t.path, "cannot look at open file", err)
			w.close(t)
			return
		}
	}
	dev, ino := fileKey(open)
	size := open.Size()
	n, err := t.f.ReadAt(w.head[:min(size, fingerprintLen)], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		w.problem(t.path, "cannot read file", err)
		w.close(t)
		return
	}
	head := w.head[:n]
	switch {
	case t.atEnd:
		at, skip, err := lastLineEnd(t.f, size, w.opts.LineCap)
		if err != nil {
			w.problem(t.path, "cannot read file", err)
			return
		}
		t.atEnd, t.known, t.dev, t.ino, t.fp = false, true, dev, ino, fingerprintOf(head)
		t.lines.reset(at)
		if skip {
			t.lines.pos, t.lines.skipping = size, true
		}
	case !t.known:
		t.known, t.dev, t.ino, t.fp = true, dev, ino, fingerprintOf(head)
	case dev != t.dev || ino != t.ino || !t.fp.matches(head):
		w.restart(ctx, t, dev, ino, head, "was replaced")
	case size < t.lines.pos:
		w.restart(ctx, t, dev, ino, head, "was truncated")
	}
	if len(head) > t.fp.n {
		t.fp = fingerprintOf(head)
	}
	t.size, t.mtime = size, open.ModTime()
	if t.snapshot {
		w.readSnapshot(ctx, t, size)
	} else {
		w.readLines(ctx, t, size)
	}
}

// restart reads t's file again from its start.
func (w *Watcher) restart(ctx context.Context, t *tail, dev, ino uint64, head []byte, why string) {
	level := slog.LevelInfo
	if t.snapshot {
		level = slog.LevelDebug // snapshots are rewritten whole by design
	}
	w.log.Log(ctx, level, "session file "+why+"; reading it from the start", "path", t.path)
	t.dev, t.ino, t.fp = dev, ino, fingerprintOf(head)
	t.lines.reset(0)
}

// readLines emits the complete lines of t's file up to size.
func (w *Watcher) readLines(ctx context.Context, t *tail, size int64) {
	if t.lines.pos >= size {
		return
	}
	w.br.Reset(io.NewSectionReader(t.f, t.lines.pos, size-t.lines.pos))
	id := t.id()
	for ctx.Err() == nil {
		line, start, end, ok, err := t.lines.next(w.br)
		if err != nil {
			w.problem(t.path, "cannot read file", err)
			w.close(t)
			return
		}
		if !ok {
			break
		}
		w.emit(ctx, Record{Agent: t.agent, Path: t.path, File: id, Offset: start, End: end, Line: line})
	}
	t.used = time.Now()
}

// readSnapshot emits the whole content of t's file when it differs from the
// last content emitted. An empty file is one being written: it waits.
func (w *Watcher) readSnapshot(ctx context.Context, t *tail, size int64) {
	if size > int64(w.opts.LineCap) {
		w.nSkipped.Add(1)
		w.log.Warn("snapshot file longer than the cap skipped", "path", t.path, "bytes", size, "cap", w.opts.LineCap)
		return
	}
	buf := make([]byte, size)
	n, err := t.f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		w.problem(t.path, "cannot read file", err)
		return
	}
	buf = buf[:n]
	sum := fingerprintOf(buf).sum
	t.used = time.Now()
	if n == 0 || t.emitted && sum == t.content {
		return
	}
	t.emitted, t.content = true, sum
	w.emit(ctx, Record{Agent: t.agent, Path: t.path, File: t.id(), End: int64(n), Line: buf})
}

// hold keeps f open for t, closing the least recently used file when
// MaxOpen files are open.
func (w *Watcher) hold(t *tail, f *os.File) {
	if len(w.open) >= w.opts.MaxOpen {
		var oldest *tail
		for o := range w.open {
			if oldest == nil || o.used.Before(oldest.used) {
				oldest = o
			}
		}
		w.close(oldest)
	}
	t.f, t.used = f, time.Now()
	w.open[t] = struct{}{}
	w.nOpen.Store(int64(len(w.open)))
}

// close closes t's file; the next read opens it again.
func (w *Watcher) close(t *tail) {
	if t.f == nil {
		return
	}
	if err := t.f.Close(); err != nil {
		w.log.Debug("closing session file", "path", t.path, "err", err)
	}
	t.f = nil
	t.lines.rewind()
	delete(w.open, t)
	w.nOpen.Store(int64(len(w.open)))
}

// closeIdle closes the files not read for IdleClose.
func (w *Watcher) closeIdle() {
	for t := range w.open {
		if time.Since(t.used) >= w.opts.IdleClose {
			w.close(t)
		}
	}
}

func (w *Watcher) closeAll() {
	for t := range w.open {
		w.close(t)
	}
}
