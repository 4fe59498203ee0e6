// Package watch finds agents' session files under their root folders, follows
// them and hands out their complete lines, in order; it never reads what the
// lines say.
package watch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"nudge/internal/watch/muse"
)

// Defaults of Options and the fixed limits (PLATFORM.md §6).
const (
	// Claude Code writes 40 KB+ lines routinely and multi-MB ones on /compact.
	defaultLineCap   = 8 << 20
	defaultMaxOpen   = 64
	defaultIdleClose = 2 * time.Minute
	defaultRescan    = 5 * time.Second
	// Where folder watches are not used, the scan interval drops to fastScan
	// after a change and doubles up to slowScan while nothing changes.
	fastScan = 250 * time.Millisecond
	slowScan = 2 * time.Second
	// A batch is sent once it holds this many records, or bytes of lines.
	batchRecords = 1024
	batchBytes   = 4 << 20
	readBuffer   = 64 << 10
)

// Record is one complete line of a session file, or the whole content of a
// snapshot file.
type Record struct {
	Agent  string
	Path   string
	File   FileID
	Offset int64 // where this line starts
	// End is where the next line starts: the position to store once this
	// record's events are committed.
	End int64
	// Line is one complete line, newline stripped; for a Snapshot file, the
	// whole content.
	Line []byte
	// Gone: a Snapshot file was removed (Line is nil).
	Gone bool
	// Checkpoint: no line, only a position to store (the old history of a
	// root's first look, skipped lines, a re-read after Rewind).
	Checkpoint bool
	mark       fingerprint // the bytes just before End
}

// Position is the position to store once r's events are stored.
func (r Record) Position() Position {
	return Position{Path: r.Path, File: r.File, Offset: r.End, Mark: r.mark.markString()}
}

// Batch is what the watcher emits, in order. Synced is set (with no records)
// to answer Sync(path), after that path's records.
type Batch struct {
	Records []Record
	Synced  string
	// Seq numbers the batches handed out, for Ack; Epoch counts the Rewinds
	// applied before it was read (a batch from before the latest Rewind is
	// to be ignored).
	Seq, Epoch uint64
	// Ready: the first scan of every root is done. The batch that says so
	// carries the last positions of that scan: storing them together with
	// the mark that each FirstLook root was looked at is one transaction.
	Ready bool
}

// Position is a stored tail position: the End of the last committed record.
type Position struct {
	Path   string
	File   FileID
	Offset int64
	// Mark fingerprints the bytes just before Offset ("" when unknown):
	// reading on from Offset needs them unchanged (docs/durability.md).
	Mark string
}

// Options configures a Watcher; zero values take the defaults.
type Options struct {
	Sources []Source
	// Positions are the stored positions from the last run, by path. A file
	// without one is read from its start, unless its root is at its first
	// look (Source.FirstLook).
	Positions map[string]Position
	// LineCap (default 8 MiB): longer lines are skipped, counted and logged.
	LineCap int
	// MaxOpen (default 64) is how many files are held open at most.
	MaxOpen int
	// IdleClose (default 2m) closes files not written for this long.
	IdleClose time.Duration
	// Rescan (default 5s) is the interval of the backstop full scan where
	// folder watches wake the watcher (Linux). Where they are not used
	// (macOS, BSDs), scans run every 250 ms after a change, slowing to 2 s.
	Rescan time.Duration
	Logger *slog.Logger
}

// Stats counts what the watcher holds.
type Stats struct {
	FilesWatched int // session files found and followed
	FilesOpen    int
	LinesSkipped int // lines skipped since start: over LineCap, or no JSON record
	// SkippedFiles are the files those lines were in, the latest first (at
	// most 20).
	SkippedFiles []SkippedFile
}

// Watcher follows the session files of its sources.
type Watcher struct {
	opts  Options
	log   *slog.Logger
	roots []*root
	out   chan Batch

	// owned by the Run goroutine
	scanOnly   bool
	fsw        *fsnotify.Watcher
	dirs       map[string]bool // folders with a watch
	tails      map[string]*tail
	open       map[*tail]struct{}
	problems   map[string]bool // paths whose error was logged, until they recover
	initial    bool            // the first scan is running
	gen        uint64          // the current scan
	changes    uint64          // files found, lost or read
	batch      Batch
	batchSize  int
	batchCount int                   // records in batch that fill it (not checkpoints)
	batchEnds  map[*tail]commitPoint // where each tail stands after batch
	batchGone  []Record              // the snapshot removals batch reports
	lostGone   []Record              // those of batches dropped before a Rewind
	br         *bufio.Reader
	head       [fingerprintLen]byte
	now        func() time.Time

	// Acknowledgement (docs/durability.md): seq numbers the batches sent,
	// inflight are those not acknowledged yet, epoch counts the Rewinds
	// applied; owned by the Run goroutine except the atomics.
	seq        uint64
	epoch      uint64
	inflight   []sentBatch
	readyAcked bool          // the batch saying the first scan is done was acknowledged
	acked      atomic.Uint64 // the last batch acknowledged
	rewinds    atomic.Uint64 // the Rewinds asked for
	rewindWake chan struct{}

	syncMu   sync.Mutex
	syncs    []string
	syncWake chan struct{}
	live     liveState
	hosts    map[string]*muse.Host // by agent, for FileSet.Host sources
	// streams counts followLive and the stream goroutines it starts; Run
	// returns once they have ended.
	streams sync.WaitGroup

	started  atomic.Bool
	ready    atomic.Bool
	nWatched atomic.Int64
	nOpen    atomic.Int64
	nSkipped atomic.Int64
	badMu    sync.Mutex
	badFiles map[string]*SkippedFile
}

// root is a Source with its patterns split into segments.
type root struct {
	Source
	sets     [][]string
	waypoint string // the watched ancestor while Root does not exist
}

// New checks opts and returns a Watcher; Run starts it.
func New(opts Options) (*Watcher, error) {
	if opts.LineCap <= 0 {
		opts.LineCap = defaultLineCap
	}
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = defaultMaxOpen
	}
	if opts.IdleClose <= 0 {
		opts.IdleClose = defaultIdleClose
	}
	if opts.Rescan <= 0 {
		opts.Rescan = defaultRescan
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Watcher{
		opts:     opts,
		log:      opts.Logger,
		out:      make(chan Batch),
		scanOnly: scanOnly,
		dirs:     map[string]bool{},
		tails:    map[string]*tail{},
		open:     map[*tail]struct{}{},
		problems: map[string]bool{},
		br:       bufio.NewReaderSize(nil, readBuffer),
		now:      time.Now,
		syncWake: make(chan struct{}, 1),
		live:     newLiveState(),

		rewindWake: make(chan struct{}, 1),
		badFiles:   map[string]*SkippedFile{},
		batchEnds:  map[*tail]commitPoint{},
	}
	for _, s := range opts.Sources {
		if s.Agent == "" || s.Root == "" {
			return nil, fmt.Errorf("watch: source %q with root %q: agent and root are required", s.Agent, s.Root)
		}
		abs, err := filepath.Abs(s.Root)
		if err != nil {
			return nil, fmt.Errorf("watch: root of %s: %w", s.Agent, err)
		}
		r := &root{Source: s}
		r.Root = abs
		for _, set := range s.Files {
			segs, err := splitPattern(set.Pattern)
			if err != nil {
				return nil, fmt.Errorf("watch: %s: %w", s.Agent, err)
			}
			r.sets = append(r.sets, segs)
		}
		w.roots = append(w.roots, r)
		w.addHosts(r)
	}
	return w, nil
}

func splitPattern(p string) ([]string, error) {
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return nil, fmt.Errorf("pattern %q: empty, . or .. segment", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	return segs, nil
}

// fileSet is the file set that names the file at rel, a path below the root.
func (r *root) fileSet(rel []string) (FileSet, bool) {
	for i, segs := range r.sets {
		if len(rel) == len(segs) && matchSegments(segs, rel) {
			return r.Files[i], true
		}
	}
	return FileSet{}, false
}

// leadsTo reports whether the folder at rel can hold matching files below it.
func (r *root) leadsTo(rel []string) bool {
	for _, segs := range r.sets {
		if len(rel) < len(segs) && matchSegments(segs[:len(rel)], rel) {
			return true
		}
	}
	return false
}

func matchSegments(pattern, rel []string) bool {
	for i, p := range pattern {
		if ok, _ := path.Match(p, rel[i]); !ok {
			return false
		}
	}
	return true
}

// under returns the segments of name below dir, when name is inside dir.
func under(dir, name string) ([]string, bool) {
	rest, ok := strings.CutPrefix(name, dir)
	if !ok || len(rest) < 2 || rest[0] != filepath.Separator {
		return nil, false
	}
	return strings.Split(rest[1:], string(filepath.Separator)), true
}

// Batches delivers what the watcher reads, in order. It is unbuffered and is
// closed when Run returns.
func (w *Watcher) Batches() <-chan Batch { return w.out }

// Ready reports whether the first scan of every root is done.
func (w *Watcher) Ready() bool { return w.ready.Load() }

// Stats returns the current counts.
func (w *Watcher) Stats() Stats {
	return Stats{
		FilesWatched: int(w.nWatched.Load()),
		FilesOpen:    int(w.nOpen.Load()),
		LinesSkipped: int(w.nSkipped.Load()),
		SkippedFiles: w.skippedFiles(),
	}
}

// Sync asks for path to be read to its end now; a Batch with Synced = path
// follows its records. It does not block.
func (w *Watcher) Sync(path string) {
	w.syncMu.Lock()
	w.syncs = append(w.syncs, path)
	w.syncMu.Unlock()
	select {
	case w.syncWake <- struct{}{}:
	default:
	}
}

// Run follows the files until ctx is done, then closes Batches.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice")
	}
	defer close(w.out)
	defer w.closeAll()
	defer w.closeHosts()
	if !w.scanOnly {
		fsw, err := fsnotify.NewWatcher()
		if err != nil {
			w.log.Warn("cannot watch folders; scanning them instead", "err", err)
			w.scanOnly = true
		} else {
			w.fsw = fsw
			defer fsw.Close()
		}
	}
	w.initial = true
	w.scanRoots(ctx)
	w.initial = false
	w.goneWhileAway(ctx)
	w.batch.Ready = true
	w.flush(ctx)
	w.ready.Store(true)
	defer w.streams.Wait()
	w.streams.Go(func() { w.followLive(ctx) })

	var (
		events   <-chan fsnotify.Event
		errs     <-chan error
		interval = w.opts.Rescan
	)
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	} else {
		interval = fastScan
	}
	rescan := time.NewTimer(interval)
	defer rescan.Stop()
	idle := time.NewTicker(w.opts.IdleClose / 2)
	defer idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.handle(ctx, ev)
			w.flush(ctx)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("folder events overflowed; rescanning every root")
				w.scanAll(ctx)
			} else {
				w.log.Warn("folder watch error", "err", err)
			}
		case <-w.syncWake:
			w.runSyncs(ctx)
		case <-w.rewindWake:
			w.rewind(ctx)
		case m := <-w.live.msgs:
			w.takeLive(ctx, m)
			w.flush(ctx)
		case <-rescan.C:
			changed := w.scanAll(ctx)
			if w.fsw == nil {
				interval = nextScan(interval, changed)
			}
			rescan.Reset(interval)
		case <-idle.C:
			w.closeIdle()
			w.logUnloggedBad()
		}
	}
}

// nextScan is the scan interval where scans are the only wake-up.
func nextScan(cur time.Duration, changed bool) time.Duration {
	if changed {
		return fastScan
	}
	return min(cur*2, slowScan)
}

// handle reacts to one folder event: reads the file it names, or watches and
// scans the folder it names.
func (w *Watcher) handle(ctx context.Context, ev fsnotify.Event) {
	if ev.Op&^fsnotify.Chmod == 0 {
		return
	}
	if (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) && w.dirs[ev.Name] {
		w.dropDir(ctx, ev.Name)
	}
	for _, r := range w.roots {
		if ev.Name == r.Root || strings.HasPrefix(r.Root, ev.Name+string(filepath.Separator)) {
			w.scanRoot(ctx, r)
			continue
		}
		rel, ok := under(r.Root, ev.Name)
		if !ok {
			continue
		}
		if set, ok := r.fileSet(rel); ok {
			w.visit(ctx, r, ev.Name, set, true)
		} else if db, set, ok := r.databaseOf(ev.Name, rel); ok {
			w.visit(ctx, r, db, set, true)
		}
		if ev.Has(fsnotify.Create) && r.leadsTo(rel) {
			if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
				w.scanDir(ctx, r, ev.Name, rel)
			}
		}
	}
}

// runSyncs reads each path asked for by Sync and answers it.
func (w *Watcher) runSyncs(ctx context.Context) {
	w.syncMu.Lock()
	paths := w.syncs
	w.syncs = nil
	w.syncMu.Unlock()
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			w.readPath(ctx, abs)
		}
		w.flush(ctx)
		w.batch.Synced = p
		w.flush(ctx)
	}
}

// readPath reads the session file at p, if a source names it.
func (w *Watcher) readPath(ctx context.Context, p string) {
	for _, r := range w.roots {
		if rel, ok := under(r.Root, p); ok {
			if set, ok := r.fileSet(rel); ok {
				w.visit(ctx, r, p, set, true)
				return
			}
		}
	}
	w.log.Debug("sync of a path no source names", "path", p)
}

// scanAll scans every root, then looks again at followed files the scan did
// not find. It reports whether anything changed.
func (w *Watcher) scanAll(ctx context.Context) bool {
	before := w.changes
	w.scanRoots(ctx)
	w.flush(ctx)
	return w.changes != before
}

// scanRoots is scanAll without sending what it read.
func (w *Watcher) scanRoots(ctx context.Context) {
	w.gen++
	for _, r := range w.roots {
		if ctx.Err() != nil {
			return
		}
		w.scanRoot(ctx, r)
	}
	for _, t := range w.tails {
		if t.seen != w.gen {
			w.read(ctx, t)
		}
	}
}

// scanRoot scans r's root, or waits for it to appear.
func (w *Watcher) scanRoot(ctx context.Context, r *root) {
	fi, err := os.Stat(r.Root)
	if err != nil || !fi.IsDir() {
		w.awaitRoot(ctx, r)
		return
	}
	w.scanDir(ctx, r, r.Root, nil)
	if old := r.waypoint; old != "" {
		r.waypoint = ""
		w.unwatchUnwanted(old)
	}
}

// awaitRoot watches the nearest existing ancestor of a missing root, so its
// creation is seen at once; scans find it otherwise.
func (w *Watcher) awaitRoot(ctx context.Context, r *root) {
	if w.fsw == nil {
		return
	}
	for {
		a := nearestDir(r.Root)
		if a == r.Root {
			w.scanRoot(ctx, r)
			return
		}
		w.watchDir(a)
		if old := r.waypoint; old != a {
			r.waypoint = a
			if old != "" {
				w.unwatchUnwanted(old)
			}
		}
		if nearestDir(r.Root) == a {
			return
		}
	}
}

// nearestDir is p or its deepest existing ancestor folder.
func nearestDir(p string) string {
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// scanDir watches dir, then follows the matching files in it and scans the
// folders below it that can hold some.
func (w *Watcher) scanDir(ctx context.Context, r *root, dir string, rel []string) {
	w.watchDir(dir)
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		w.problem(dir, "cannot read folder", err)
	default:
		delete(w.problems, dir)
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return
		}
		name := filepath.Join(dir, e.Name())
		sub := append(rel[:len(rel):len(rel)], e.Name())
		set, isFile := r.fileSet(sub)
		leads := r.leadsTo(sub)
		if !isFile && !leads {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := os.Stat(name)
			if err != nil {
				w.problem(name, "cannot follow link", err)
				continue
			}
			isDir = fi.IsDir()
		}
		switch {
		case isDir && leads:
			w.scanDir(ctx, r, name, sub)
		case !isDir && isFile:
			w.visit(ctx, r, name, set, false)
		}
	}
}

// watchDir adds a folder watch (never a file watch) on dir.
func (w *Watcher) watchDir(dir string) {
	if w.fsw == nil || w.dirs[dir] {
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		w.problem(dir, "cannot watch folder; scans will find its changes", err)
		return
	}
	w.dirs[dir] = true
}

// dropDir forgets the watches at and below a folder that was removed or moved,
// and the files that went with it.
func (w *Watcher) dropDir(ctx context.Context, dir string) {
	for d := range w.dirs {
		if _, below := under(dir, d); d == dir || below {
			w.unwatch(d)
		}
	}
	for p, t := range w.tails {
		if _, below := under(dir, p); below {
			w.read(ctx, t)
		}
	}
}

// unwatchUnwanted removes the watch on dir unless a root still needs it.
func (w *Watcher) unwatchUnwanted(dir string) {
	for _, r := range w.roots {
		rel, below := under(r.Root, dir)
		if r.waypoint == dir || r.Root == dir || below && r.leadsTo(rel) {
			return
		}
	}
	if w.dirs[dir] {
		w.unwatch(dir)
	}
}

// unwatch removes the watch on dir.
func (w *Watcher) unwatch(dir string) {
	delete(w.dirs, dir)
	if w.fsw != nil {
		_ = w.fsw.Remove(dir) // the kernel drops the watch of a deleted folder itself
	}
}

// goneWhileAway reports snapshot files of the last run that are gone now;
// the caller sends them.
func (w *Watcher) goneWhileAway(ctx context.Context) {
	paths := make([]string, 0, len(w.opts.Positions))
	for p := range w.opts.Positions {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if w.tails[p] != nil {
			continue
		}
		for _, r := range w.roots {
			rel, ok := under(r.Root, p)
			if !ok {
				continue
			}
			if set, ok := r.fileSet(rel); ok && set.Snapshot {
				if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
					w.emitGone(ctx, Record{Agent: r.Agent, Path: p, File: w.opts.Positions[p].File, Gone: true})
				}
				break
			}
		}
	}
}

// problem logs a path's error once, until the path recovers.
func (w *Watcher) problem(p, msg string, err error) {
	if !w.problems[p] {
		w.problems[p] = true
		w.log.Warn(msg, "path", p, "err", err)
	}
}
