package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"nudge/internal/watch/disk"
)

// visit follows the file at p, reading it when it is new, when force is set
// (an event named it), or when its size, time or inode changed since the last
// look. A trigger's file is not followed: an event naming it fires it.
func (w *Watcher) visit(ctx context.Context, r *root, p string, set FileSet, force bool) {
	if tr, ok := w.sourceOf(set.Kind).(trigger); ok {
		if force {
			tr.fire()
		}
		return
	}
	t := w.tails[p]
	if t != nil && force {
		t.seen = w.gen
		w.read(ctx, t)
		return
	}
	fi, err := os.Stat(p)
	w.visitStat(ctx, r, p, set, stat{fi, err})
}

// stat is what os.Stat said of a file.
type stat struct {
	fi  os.FileInfo
	err error
}

// visitStat is visit, not forced, of a file that st describes.
func (w *Watcher) visitStat(ctx context.Context, r *root, p string, set FileSet, st stat) {
	t := w.tails[p]
	fi, ok := w.looked(ctx, p, t, st)
	if !ok {
		return
	}
	if t == nil {
		t = w.track(r, p, set)
	} else {
		dev, ino := fileKey(fi)
		size, mtime := t.src.stamp(p, fi)
		if size == t.size && mtime.UnixNano() == t.mtime && dev == t.dev && ino == t.ino {
			t.seen = w.gen
			return
		}
	}
	t.seen = w.gen
	if _, ok := t.src.(linesSource); ok && w.settled(ctx, t, fi) {
		return
	}
	w.readFile(ctx, t, fi)
}

// linesSource reads files of lines, appended (classify.Lines, JSONLines).
type linesSource struct {
	w    *Watcher
	json bool // each line is one JSON record; a line that is not is skipped
}

func (linesSource) stamp(p string, fi os.FileInfo) (int64, time.Time) { return fileStamp(p, fi) }
func (linesSource) positioned() bool                                  { return true }
func (linesSource) lasting() bool                                     { return false }

// read reads what was appended to t's file: held open and not replaced,
// with one read (readAppended), else after checking the file's identity.
func (s linesSource) read(ctx context.Context, t *tail, fi os.FileInfo) {
	w := s.w
	if t.f != nil {
		if dev, ino := fileKey(fi); dev == t.dev && ino == t.ino && w.readAppended(ctx, t, fi) {
			return
		}
	}
	if open, ok := w.openHeld(ctx, t, fi); ok {
		w.readOpen(ctx, t, open)
	}
}

// settled tells, from fi alone, that t's file of lines needs no reading: a
// first look takes its position at the file's size, and a file that has
// not grown past its position has nothing new. Neither opens the file; its
// identity is checked when it changes (docs/durability.md).
func (w *Watcher) settled(ctx context.Context, t *tail, fi os.FileInfo) bool {
	dev, ino := fileKey(fi)
	size := fi.Size()
	switch {
	case t.atEnd:
		t.atEnd, t.known, t.deferred, t.dev, t.ino = false, true, true, dev, ino
		t.offset = size
		if t.reading != nil {
			t.lines.reset(size)
			t.committed = t.point()
		}
		t.size, t.mtime = size, fi.ModTime().UnixNano()
		w.checkpointOf(ctx, t)
		return true
	case t.known && (t.reading == nil || t.f == nil && t.lines.pos == t.lines.start) && dev == t.dev && ino == t.ino && size == t.at() &&
		(!w.initial || fi.ModTime().Before(w.opts.Stored)):
		t.size, t.mtime = size, fi.ModTime().UnixNano()
		return true
	}
	return false
}

// look stats the file at p. ok is false when it cannot be looked at or is
// no regular file (the problem is logged and shown until the path is a
// regular file or gone; t, if followed, is forgotten), or is gone.
func (w *Watcher) look(ctx context.Context, p string, t *tail) (fi os.FileInfo, ok bool) {
	fi, err := os.Stat(p)
	return w.looked(ctx, p, t, stat{fi, err})
}

// looked is look with the file's stat already taken.
func (w *Watcher) looked(ctx context.Context, p string, t *tail, st stat) (fi os.FileInfo, ok bool) {
	fi, err := st.fi, st.err
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		w.problem(p, "cannot look at file", err)
		return nil, false
	case err != nil || !fi.Mode().IsRegular():
		if t != nil {
			w.forget(ctx, t)
		}
		if err == nil {
			w.problem(p, "not read", fmt.Errorf("not a regular file (%s)", fi.Mode().Type()))
		} else {
			w.recovered(p)
		}
		return nil, false
	}
	return fi, true
}

// track starts following the file at p: from its stored position, from its
// end (the old history a root's first look finds), or from its start
// (docs/durability.md).
func (w *Watcher) track(r *root, p string, set FileSet) *tail {
	t := &tail{agent: r.Agent, path: p, src: w.sourceOf(set.Kind)}
	pos, stored := w.opts.Positions[p]
	if stored {
		t.positioned = true
		w.storedFollowed++
	}
	if stored && t.src.positioned() {
		t.known, t.dev, t.ino = true, pos.File.Dev, pos.File.Inode
		t.fp, t.deferred = parseFingerprint(pos.File.Fingerprint), pos.File.Fingerprint == ""
		t.offset = max(pos.Offset, 0)
		t.mark = parseMark(pos.Mark)
	} else if w.initial && r.FirstLook && t.src.positioned() {
		t.atEnd = true
	}
	if t.src.lasting() {
		t.warm(w.opts.LineCap)
	}
	w.tails[p] = t
	w.perDir[filepath.Dir(p)]++
	w.nWatched.Store(int64(len(w.tails)))
	w.statsChanged()
	return t
}

// forget stops following t, whose file is gone; a goneTeller reports it.
func (w *Watcher) forget(ctx context.Context, t *tail) {
	w.close(t)
	if t.positioned {
		w.storedFollowed--
	}
	delete(w.tails, t.path)
	w.recovered(t.path)
	delete(w.owed, t)
	delete(w.relook, t)
	if dir := filepath.Dir(t.path); w.perDir[dir] > 1 {
		w.perDir[dir]--
	} else {
		delete(w.perDir, dir)
	}
	w.nWatched.Store(int64(len(w.tails)))
	w.statsChanged()
	if g, ok := t.src.(goneTeller); ok {
		g.gone(ctx, t)
	}
}

// readWritten brings t up to date after a write event named its path:
// the file of lines held open is the one written (a file put in its place
// has an event of its own), so what was appended to it is read
// (readAppended), or else its own stat does.
func (w *Watcher) readWritten(ctx context.Context, t *tail) {
	if _, lines := t.src.(linesSource); lines && t.reading != nil && t.f != nil {
		if w.readAppended(ctx, t, nil) {
			return
		}
		if open, err := t.f.Stat(); err == nil {
			w.readOpen(ctx, t, open)
			return
		}
	}
	w.read(ctx, t)
}

// readAppended reads what was appended to t's file, held open, with a
// single read: of the bytes just before the position, which must still be
// those of its mark, and of all that follows them. A file held open keeps
// its inode, and one whose bytes before the position hold was not cut or
// rewritten up to there, so neither a stat nor its first bytes are needed
// (docs/durability.md §2). fi is the file's stat when a look took one, or
// nil. It reports false, having emitted nothing, when that read cannot
// tell: no mark yet, first bytes still growing, a mark that does not hold,
// or more than one read's worth appended; the full check then does.
func (w *Watcher) readAppended(ctx context.Context, t *tail, fi os.FileInfo) bool {
	at, m := t.lines.start, t.mark
	if t.deferred || !t.known || t.markStale || m.n <= 0 || int64(m.n) > at || t.fp.n < fingerprintLen {
		return false
	}
	from := at - int64(m.n)
	n, err := t.f.ReadAt(w.aheadBuf[:], from)
	if err != nil && !errors.Is(err, io.EOF) || n == len(w.aheadBuf) || n < m.n || fnv1a(fnvOffset, w.aheadBuf[:m.n]) != m.sum {
		return false
	}
	size := from + int64(n)
	if size < t.lines.pos {
		t.lines.rewind() // the unfinished line was cut: read it again
	}
	w.ahead = readAhead{at: at, bytes: w.aheadBuf[m.n:n]}
	// Its time is not known without a stat of this size: a look that
	// compares it reads the file again, and finds nothing new.
	t.size, t.mtime = size, 0
	if fi != nil && fi.Size() == size {
		t.mtime = fi.ModTime().UnixNano()
	}
	w.readLines(ctx, t, size)
	return true
}

// read brings t up to date with its file.
func (w *Watcher) read(ctx context.Context, t *tail) {
	if fi, ok := w.look(ctx, t.path, t); ok {
		w.readFile(ctx, t, fi)
	}
}

// readFile brings t up to date with its file, which fi describes, through
// its source.
func (w *Watcher) readFile(ctx context.Context, t *tail, fi os.FileInfo) {
	t.warm(w.opts.LineCap)
	t.src.read(ctx, t, fi)
}

// openHeld returns the stat of t's file held open, opening it unless the
// one held is the file fi describes. ok is false when it cannot be opened
// (the problem is shown) or is gone (t is forgotten).
func (w *Watcher) openHeld(ctx context.Context, t *tail, fi os.FileInfo) (open os.FileInfo, ok bool) {
	if t.f != nil {
		if o, err := t.f.Stat(); err == nil && os.SameFile(fi, o) {
			open = o
		} else {
			w.close(t)
		}
	}
	if t.f == nil {
		f, info, err := disk.Open(t.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.forget(ctx, t)
			return nil, false
		case err != nil:
			w.problem(t.path, "cannot open file", err)
			return nil, false
		}
		w.recovered(t.path)
		w.hold(t, f)
		open = info
	}
	return open, true
}

// readOpen reads t's file of lines, held open, which open (its own stat)
// describes: it checks that the file is still the one its position belongs
// to, then emits what was added.
func (w *Watcher) readOpen(ctx context.Context, t *tail, open os.FileInfo) {
	w.ahead = readAhead{}
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
	case t.deferred:
		if !w.takeIdentity(t, size, dev, ino, head) {
			return
		}
	case !t.known:
		t.known, t.dev, t.ino, t.fp = true, dev, ino, fingerprintOf(head)
	default:
		if !w.checkIdentity(t, size, dev, ino, head) {
			return
		}
	}
	if len(head) > t.fp.n {
		t.fp = fingerprintOf(head)
	}
	t.size, t.mtime = size, open.ModTime().UnixNano()
	w.readLines(ctx, t, size)
}

// takeIdentity takes the identity of a file whose position a first look
// took from its size alone, the first time the file changes: its first
// bytes, and the bytes before the position. A position that is not at a
// line's end (a line was being written at the first look) goes back to
// that line's start; a file now shorter than it is read from its start
// (docs/durability.md). It reports false when the file cannot be read.
func (w *Watcher) takeIdentity(t *tail, size int64, dev, ino uint64, head []byte) bool {
	at := t.lines.start
	if size < at {
		t.deferred = false
		w.restart(t, dev, ino, head, "was truncated")
		return true
	}
	if at > 0 {
		var last [1]byte
		if _, err := t.f.ReadAt(last[:], at-1); err != nil {
			w.problem(t.path, "cannot read file", err)
			w.close(t)
			return false
		}
		if last[0] != '\n' {
			start, skip, err := lastLineEnd(t.f, at, w.opts.LineCap)
			if err != nil {
				w.problem(t.path, "cannot read file", err)
				w.close(t)
				return false
			}
			t.lines.reset(start)
			if skip {
				t.lines.pos, t.lines.skipping = at, true
			}
		}
	}
	m, err := readMark(t.f, t.lines.start)
	if err != nil {
		w.problem(t.path, "cannot read file", err)
		w.close(t)
		return false
	}
	t.deferred, t.known, t.dev, t.ino, t.fp, t.mark, t.markStale = false, true, dev, ino, fingerprintOf(head), m, false
	return true
}

// checkIdentity checks that t's file is still the one its position belongs
// to: the same first bytes and the same bytes just before the position. The
// same content under a new inode (a file moved over it, an editor's save)
// goes on where it was; anything else is read again from its start, with a
// log line saying why. It reports false when the file cannot be read.
func (w *Watcher) checkIdentity(t *tail, size int64, dev, ino uint64, head []byte) bool {
	same := t.fp.matches(head)
	if same && !t.markStale {
		ok, after, err := markHolds(t.f, t.lines.start, size, t.mark, w.aheadBuf[:])
		w.ahead = readAhead{at: t.lines.start, bytes: after}
		if err != nil {
			w.problem(t.path, "cannot read file", err)
			w.close(t)
			return false
		}
		same = ok
	}
	same = same && size >= t.lines.start
	moved := dev != t.dev || ino != t.ino
	switch {
	case same && moved:
		w.log.Info("session file replaced by the same content; reading on where it was", "path", t.path, "offset", t.lines.start)
		t.dev, t.ino = dev, ino
	case same:
	case size < t.lines.start:
		w.restart(t, dev, ino, head, "was truncated")
	case moved:
		w.restart(t, dev, ino, head, "was replaced")
	default:
		w.restart(t, dev, ino, head, "was rewritten before the position read up to")
	}
	if size < t.lines.pos {
		t.lines.rewind() // the unfinished line was cut: read it again
	}
	return true
}

// restart reads t's file again from its start.
func (w *Watcher) restart(t *tail, dev, ino uint64, head []byte, why string) {
	w.log.Info("session file "+why+"; reading it from the start", "path", t.path, "offset", t.lines.start)
	t.dev, t.ino, t.fp = dev, ino, fingerprintOf(head)
	t.lines.reset(0)
	t.mark, t.markStale = fingerprint{}, false
}

// readLines emits the complete lines of t's file up to size; lines that
// are no JSON record in a file of them are skipped, counted and logged. When
// the last lines read were skipped, or the position must be stored anyway
// (t.checkpoint), a checkpoint carries the position.
func (w *Watcher) readLines(ctx context.Context, t *tail, size int64) {
	if t.lines.pos < size {
		w.bytes = fileBytes{f: t.f, off: t.lines.pos, end: size, ahead: w.ahead.from(t.lines.pos)}
		w.br.Reset(&w.bytes)
		id := t.id() // the file's identity, formatted once for all its lines
		lines, _ := t.src.(linesSource)
		for ctx.Err() == nil {
			if w.batchLines == nil {
				w.batchLines = &lineArena{}
			}
			line, at, end, ok, err := t.lines.next(w.br, w.batchLines)
			if err != nil {
				w.problem(t.path, "cannot read file", err)
				w.close(t)
				return
			}
			if !ok {
				break
			}
			t.mark, t.markStale = lineMark(line), false
			if lines.json {
				if why := badRecord(line); why != "" {
					t.checkpoint = true
					w.skipped(t, at, why)
					continue
				}
			}
			w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: id, Offset: at, End: end, Line: line, mark: t.mark})
		}
		t.used = time.Now()
	}
	w.ahead, w.bytes = readAhead{}, fileBytes{}
	if t.checkpoint {
		w.checkpointOf(ctx, t)
	}
}

// readAhead is what the identity check read past a position: the file's
// bytes from at on, so the lines after it need no read of their own.
type readAhead struct {
	at    int64
	bytes []byte
}

// from is the part of a that starts at offset off, or nil.
func (a readAhead) from(off int64) []byte {
	if off < a.at || off > a.at+int64(len(a.bytes)) {
		return nil
	}
	return a.bytes[off-a.at:]
}

// fileBytes delivers a file from off up to end: first the bytes ahead already
// read from off on, then the file itself.
type fileBytes struct {
	f        *os.File
	off, end int64
	ahead    []byte
}

func (s *fileBytes) Read(p []byte) (int, error) {
	if len(s.ahead) > 0 {
		n := copy(p, s.ahead)
		s.ahead, s.off = s.ahead[n:], s.off+int64(n)
		return n, nil
	}
	if s.off >= s.end {
		return 0, io.EOF
	}
	n, err := s.f.ReadAt(p[:min(int64(len(p)), s.end-s.off)], s.off)
	s.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// checkpointOf emits t's position with no line.
func (w *Watcher) checkpointOf(ctx context.Context, t *tail) {
	if t.reading != nil && t.markStale {
		m, err := readMark(t.f, t.lines.start)
		if err != nil {
			w.problem(t.path, "cannot read file", err)
			return
		}
		t.mark, t.markStale = m, false
	}
	at := t.at()
	w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: t.id(), Offset: at, End: at, Checkpoint: true, mark: t.mark})
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
		oldest.cool(w.acked.Load())
	}
	t.f, t.used = f, time.Now()
	// Lines are read only from an open file: what tells of a skipped one
	// lives as long as it is open, not with every file followed.
	t.lines.onSkip = func(start, end int64) {
		t.markStale, t.checkpoint = true, true
		w.skipped(t, start, capReason(end-start, w.opts.LineCap))
	}
	w.open[t] = struct{}{}
	w.nOpen.Store(int64(len(w.open)))
	w.statsChanged()
}

// close closes t's file; the next read opens it again.
func (w *Watcher) close(t *tail) {
	if t.reading == nil || t.f == nil {
		return
	}
	if err := t.f.Close(); err != nil {
		w.log.Debug("closing session file", "path", t.path, "err", err)
	}
	t.f, t.lines.onSkip = nil, nil
	t.lines.rewind()
	delete(w.open, t)
	w.nOpen.Store(int64(len(w.open)))
	w.statsChanged()
}

// closeIdle closes the files not read for IdleClose, and drops the state
// of reading those that hold nothing uncommitted.
func (w *Watcher) closeIdle() {
	w.closeDue = time.Time{}
	for t := range w.open {
		if time.Since(t.used) >= w.opts.IdleClose {
			w.close(t)
			t.cool(w.acked.Load())
		}
	}
}

func (w *Watcher) closeAll() {
	for t := range w.open {
		w.close(t)
	}
}
