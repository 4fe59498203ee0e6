package watch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The folder-level design (docs/mac.md): the system says only that
// something changed in a folder, some time after it did (FSEvents on
// macOS, with its latency). The watcher then looks in that folder: it
// stats the matching files there and reads those whose size, time or
// inode changed, and scans the folders that are new. A source that cannot
// see a file grow by its folder (kqueue) is told which files are hot.

// folderSource is the system's part of the folder-level design; everything
// else runs the same on every system.
//
// newFolderSource(roots, latency, log) makes the system's source: one that
// watches whole trees (FSEvents) watches the roots' trees from the start,
// even before they exist; one that watches single folders is told each
// folder by Add.
type folderSource interface {
	// Add reports changes in dir (a source that watches single folders);
	// a source of whole trees needs none.
	Add(dir string) error
	Remove(dir string)
	// Hot names the files being written now (at most MaxOpen).
	Hot(files []string)
	// Complete reports whether a file's growth is reported by its folder
	// whether or not it is hot; if not, scans every Rescan find the growth
	// of the others.
	Complete() bool
	// Changes delivers the folders that changed, gathered over the
	// latency; closed by Close.
	Changes() <-chan []folderChange
	Close() error
}

// folderChange names a folder where something changed. All: changes were
// lost (the system dropped events); every root is scanned again. Gone: the
// watched folder Dir itself was removed or moved, and its watch with it; a
// folder at its path now is another one, to be watched anew (sources with a
// watch per folder: inotify, kqueue).
type folderChange struct {
	Dir       string
	All, Gone bool
}

// handleFolders looks in each folder that changed, then tells the source
// which files are hot.
func (w *Watcher) handleFolders(ctx context.Context, changes []folderChange) {
	for _, c := range changes {
		if c.All {
			w.log.Warn("folder events were lost; rescanning every root")
			w.scanRoots(ctx)
			break
		}
		if c.Gone {
			w.dropDir(ctx, c.Dir)
			w.lookIn(ctx, filepath.Dir(c.Dir)) // finds a folder put in its place
			continue
		}
		w.lookIn(ctx, c.Dir)
	}
	w.folders.Hot(w.hot())
}

// lookIn looks at what changed in dir: the matching files in it (read when
// their stat changed), the folders below it that are new or gone, a root
// that appeared.
func (w *Watcher) lookIn(ctx context.Context, dir string) {
	for _, r := range w.roots {
		if dir == r.waypoint || r.waypoint != "" && dir == r.Root || strings.HasPrefix(r.Root, dir+string(filepath.Separator)) {
			w.scanRoot(ctx, r)
			continue
		}
		rel, below := under(r.Root, dir)
		if dir != r.Root && (!below || !r.leadsTo(rel)) {
			continue
		}
		w.lookInDir(ctx, r, dir, rel)
	}
}

// lookInDir is lookIn for a folder of r's tree.
func (w *Watcher) lookInDir(ctx context.Context, r *root, dir string, rel []string) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.dropDir(ctx, dir)
		if dir == r.Root {
			w.scanRoot(ctx, r) // gone: wait for it where it would appear
		}
		return
	case err != nil:
		w.problem(dir, "cannot read folder", err)
		return
	}
	w.recovered(dir)
	names := make(map[string]bool, len(entries))
	files := 0
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		names[name] = true
		sub := append(rel[:len(rel):len(rel)], e.Name())
		if set, ok := r.fileSet(sub); ok && !e.IsDir() {
			files++
			w.visit(ctx, r, name, set, w.fires(set))
		} else if r.leadsTo(sub) && !w.dirs[name] && w.isDir(name) {
			w.scanDir(ctx, r, name, sub)
		}
	}
	for d := range w.dirs {
		if filepath.Dir(d) == dir && !names[d] {
			w.dropDir(ctx, d)
		}
	}
	if files < w.perDir[dir] {
		for p, t := range w.tails {
			if filepath.Dir(p) == dir && !names[p] {
				w.read(ctx, t) // forgets it
			}
		}
	}
}

// hot are the files open now: those written within IdleClose.
func (w *Watcher) hot() []string {
	out := make([]string, 0, len(w.open))
	for t := range w.open {
		out = append(out, t.path)
	}
	return out
}

// coalescer gathers changed folders over a latency, as FSEvents does with
// kFSEventStreamCreateFlagNoDefer: a change after a quiet latency goes out
// at once; the folders named within a latency of the last hand-out go out
// together latency after it, each once. A lone change is seen at once,
// and a busy tree costs one look per latency.
type coalescer struct {
	latency time.Duration
	out     chan []folderChange
	mu      sync.Mutex
	pending []folderChange
	seen    map[folderChange]bool
	timer   *time.Timer
	last    time.Time // the last hand-out
	closed  bool
}

func newCoalescer(latency time.Duration) *coalescer {
	return &coalescer{latency: latency, out: make(chan []folderChange, 1), seen: map[folderChange]bool{}}
}

// note adds a change.
func (c *coalescer) note(ch folderChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.seen[ch] {
		return
	}
	c.seen[ch] = true
	c.pending = append(c.pending, ch)
	if c.timer != nil {
		return
	}
	if wait := c.latency - time.Since(c.last); wait > 0 {
		c.timer = time.AfterFunc(wait, c.send)
		return
	}
	c.sendLocked()
}

func (c *coalescer) send() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = nil
	c.sendLocked()
}

// sendLocked hands out what was gathered; when the reader is still busy
// with the last batch, what was gathered waits with the next.
func (c *coalescer) sendLocked() {
	if c.closed || len(c.pending) == 0 {
		return
	}
	select {
	case c.out <- c.pending:
		c.pending, c.seen, c.last = nil, map[folderChange]bool{}, time.Now()
	default:
		c.timer = time.AfterFunc(c.latency, c.send)
	}
}

func (c *coalescer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	close(c.out)
}
