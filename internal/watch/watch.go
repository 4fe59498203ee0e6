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
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"nudge/internal/classify"
)

// Defaults of Options and the fixed limits (docs/platform.md §6).
const (
	// Claude Code writes 40 KB+ lines routinely and multi-MB ones on /compact.
	defaultLineCap   = 8 << 20
	defaultMaxOpen   = 256
	defaultIdleClose = 2 * time.Minute
	defaultRescan    = 5 * time.Second
	defaultLatency   = 250 * time.Millisecond
	// eventBuffer is how many folder events wait while a batch is handed
	// out: the next batch takes them all at once.
	eventBuffer = 4096
	// After a batch, the next one waits between minBatchGap and
	// maxBatchGap, longer the more records the last one held (one
	// minBatchGap per gapRecords), gathering what is read meanwhile: busy
	// agents cost one store per gap rather than one per line, and a lone
	// record, or one session writing, goes at once (docs/performance.md).
	minBatchGap = 10 * time.Millisecond
	maxBatchGap = 50 * time.Millisecond
	gapRecords  = 32
	// eventGap is how long the events of files wait after those handled:
	// a file written record by record in the meantime is read once for
	// them all, and the files written are read together, into one batch.
	// The first event after a quiet moment is handled at once.
	eventGap = minBatchGap
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
	// whole content. It is valid until its batch is released (Release):
	// what is kept of it must be a copy.
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
	lines *lineArena // where the Records' lines are held
}

// Release tells the watcher that nothing holds the batch's lines any more,
// so their memory serves the next batches. A batch never released is left
// to the collector.
func (b Batch) Release() { b.lines.release() }

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
	// Stored is when Positions were last stored (zero: unknown). At the
	// start, a file modified since is opened and its identity checked even
	// when its size is still its position; an older one is not opened.
	Stored time.Time
	// LineCap (default 8 MiB): longer lines are skipped, counted and logged.
	LineCap int
	// MaxOpen (default 256) is how many files are held open at most: each
	// one written within IdleClose, the sessions at work.
	MaxOpen int
	// IdleClose (default 2m) closes files not written for this long.
	IdleClose time.Duration
	// Rescan (default 5s) is how often the folders that cannot be watched
	// (a watch refused, no folder events at all) are scanned. Watched
	// folders are scanned only after lost events (docs/performance.md).
	Rescan time.Duration
	// Events chooses how changes are seen: "" or EventsAuto, the system's
	// own way (inotify per file on Linux, FSEvents on macOS); EventsFolders,
	// changes named by folder and coalesced over Latency, the macOS design
	// on any system (docs/mac.md); EventsScan, no events: scans every
	// Rescan (file systems whose changes the system does not report, such
	// as a network share written by other machines).
	Events string
	// Latency (default 250ms) is how long folder-level changes are
	// gathered before they are looked at.
	Latency time.Duration
	Logger  *slog.Logger
}

// Ways of seeing changes (Options.Events).
const (
	EventsAuto    = "auto"
	EventsFolders = "folders"
	EventsScan    = "scan"
)

// Stats counts what the watcher holds.
type Stats struct {
	FilesWatched int // session files found and followed
	FilesOpen    int
	LinesSkipped int // lines skipped since start: over LineCap, or no JSON record
	// SkippedFiles are the files those lines were in, the latest first (at
	// most 20).
	SkippedFiles []SkippedFile
	// Stuck are the sources that cannot be read now: an agent's host that
	// does not answer, a file or folder whose reading fails.
	Stuck []Stuck
}

// Watcher follows the session files of its sources.
type Watcher struct {
	opts  Options
	log   *slog.Logger
	roots []*root
	out   chan Batch

	// owned by the Run goroutine
	fsw         *fsnotify.Watcher   // events per file (inotify), or
	folders     folderSource        // events per folder (events.go)
	dirs        map[string]bool     // folders with a watch
	unwatched   map[string]bool     // folders whose watch was refused
	perDir      map[string]int      // followed files per folder
	lastScan    time.Time           // the last full scan
	lastSent    time.Time           // when the last batch was handed out
	lastRecords int                 // and how many records it held
	owed        map[*tail]struct{}  // files with skipped lines not logged yet
	relook      map[*tail]time.Time // files a source reads once more, when
	tails       map[string]*tail
	// storedFollowed counts the tails of paths with a stored position:
	// when it is all of them, no file of the last run is gone.
	storedFollowed int
	open           map[*tail]struct{}
	// closeDue: the first open file due to be closed idle, or earlier (a
	// file read since only goes later; one opened since is due after
	// it); zero: to be found again, as once closeIdle has run.
	closeDue   time.Time
	initial    bool   // the first scan is running
	gen        uint64 // the current scan
	batch      Batch
	batchSize  int
	batchCount int                   // records in batch that fill it (not checkpoints)
	batchEnds  map[*tail]commitPoint // where each tail stands after batch
	batchGone  []Record              // the snapshot removals batch reports
	batchLines *lineArena            // where the lines of batch are copied
	lostGone   []Record              // those of batches dropped before a Rewind
	br         *bufio.Reader
	bytes      fileBytes // what br reads
	head       [fingerprintLen]byte
	// eventOrder and eventOps are handleAll's, kept from one call to the next.
	eventOrder []string
	eventOps   map[string]fsnotify.Op
	aheadBuf   [readBuffer]byte
	ahead      readAhead // of aheadBuf, read with a mark
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
	ackWake    chan struct{} // an Ack came: what it covers is let go

	syncMu   sync.Mutex
	syncs    []string
	syncWake chan struct{}
	// sources reads each kind of file (source.go).
	sources map[classify.FileKind]source
	// posts carries what the sources' own goroutines hand to the loop.
	posts chan func(context.Context)
	// streams counts the sources' goroutines; Run returns once they have
	// ended.
	streams sync.WaitGroup

	// statsWake says Stats changed.
	statsWake chan struct{}
	started   atomic.Bool
	ready     atomic.Bool
	nWatched  atomic.Int64
	nOpen     atomic.Int64
	nSkipped  atomic.Int64
	// problems are the paths whose error was logged, until they recover;
	// Stats shows them.
	problemMu sync.Mutex
	problems  map[string]Stuck
	// problemTold is when each path's problem was last logged; owned by
	// the Run goroutine.
	problemTold map[string]time.Time
	badMu       sync.Mutex
	badFiles    map[string]*SkippedFile
}

// root is a Source with its patterns split into segments.
type root struct {
	Source
	sets     [][]segment
	waypoint string // the watched ancestor while Root does not exist
}

// CheckEvents reports whether events (watch.events) is refused: it must be
// one of the ways of seeing changes, or empty for the default.
func CheckEvents(events string) error {
	switch events {
	case "", EventsAuto, EventsFolders, EventsScan:
		return nil
	}
	return fmt.Errorf("watch.events %q: want %s, %s or %s", events, EventsAuto, EventsFolders, EventsScan)
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
	if opts.Latency <= 0 {
		opts.Latency = defaultLatency
	}
	if err := CheckEvents(opts.Events); err != nil {
		return nil, err
	}
	if opts.Events == "" {
		opts.Events = EventsAuto
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Watcher{
		opts:        opts,
		log:         opts.Logger,
		out:         make(chan Batch),
		dirs:        map[string]bool{},
		unwatched:   map[string]bool{},
		perDir:      map[string]int{},
		owed:        map[*tail]struct{}{},
		relook:      map[*tail]time.Time{},
		statsWake:   make(chan struct{}, 1),
		posts:       make(chan func(context.Context), postBuffer),
		tails:       make(map[string]*tail, len(opts.Positions)),
		open:        map[*tail]struct{}{},
		problems:    map[string]Stuck{},
		problemTold: map[string]time.Time{},
		br:          bufio.NewReaderSize(nil, readBuffer),
		now:         time.Now,
		syncWake:    make(chan struct{}, 1),

		rewindWake: make(chan struct{}, 1),
		ackWake:    make(chan struct{}, 1),
		badFiles:   map[string]*SkippedFile{},
		batchEnds:  map[*tail]commitPoint{},
		eventOps:   map[string]fsnotify.Op{},
	}
	w.sources = newSources(w)
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
			src := w.sourceOf(set.Kind)
			if src == nil {
				return nil, fmt.Errorf("watch: %s: files %q of unknown kind %s", s.Agent, set.Pattern, set.Kind)
			}
			if set.Kind == classify.HostQuery && set.Host == "" {
				return nil, fmt.Errorf("watch: %s: files %q are a host query without a host", s.Agent, set.Pattern)
			}
			r.sets = append(r.sets, segs)
			if a, ok := src.(rooter); ok {
				a.addRoot(r, set)
			}
		}
		w.roots = append(w.roots, r)
	}
	return w, nil
}

func splitPattern(p string) ([]segment, error) {
	var segs []segment
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return nil, fmt.Errorf("pattern %q: empty, . or .. segment", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		segs = append(segs, newSegment(s))
	}
	return segs, nil
}

// segment is one folder or file name of a pattern. The forms the agents'
// patterns take (a name, "*", "prefix*suffix") are matched without
// path.Match: a start matches every file of the history against them.
type segment struct {
	pattern  string
	pre, suf string // the parts around the one '*' of a simple form
	star     bool   // a simple form with one '*'
	general  bool   // anything else: path.Match
}

func newSegment(p string) segment {
	s := segment{pattern: p}
	switch pre, suf, found := strings.Cut(p, "*"); {
	case strings.ContainsAny(suf, "*?[\\") || strings.ContainsAny(pre, "?[\\"):
		s.general = true
	case found:
		s.pre, s.suf, s.star = pre, suf, true
	}
	return s
}

func (s segment) match(name string) bool {
	switch {
	case s.general:
		ok, _ := path.Match(s.pattern, name)
		return ok
	case s.star:
		return len(name) >= len(s.pre)+len(s.suf) && strings.HasPrefix(name, s.pre) && strings.HasSuffix(name, s.suf)
	default:
		return name == s.pattern
	}
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

func matchSegments(pattern []segment, rel []string) bool {
	for i, p := range pattern {
		if !p.match(rel[i]) {
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
		Stuck:        w.stuck(),
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

// StatsChanged returns a channel that receives a value after Stats changed.
func (w *Watcher) StatsChanged() <-chan struct{} { return w.statsWake }

// statsChanged tells StatsChanged's reader, without waiting for it.
func (w *Watcher) statsChanged() {
	select {
	case w.statsWake <- struct{}{}:
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
	for _, src := range w.sources {
		if c, ok := src.(closer); ok {
			defer c.close()
		}
	}
	w.startEvents()
	if w.fsw != nil {
		defer w.fsw.Close()
	}
	if w.folders != nil {
		defer w.folders.Close()
	}
	w.initial = true
	w.scanRoots(ctx)
	w.initial = false
	w.goneWhileAway(ctx)
	w.opts.Positions = nil // every one is held by its file's tail now
	w.batch.Ready = true
	w.flush(ctx)
	w.ready.Store(true)
	defer w.streams.Wait()
	for _, src := range w.sources {
		if r, ok := src.(runner); ok {
			w.streams.Go(func() { r.run(ctx) })
		}
	}

	var (
		events  <-chan fsnotify.Event
		errs    <-chan error
		changes <-chan []folderChange
	)
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	if w.folders != nil {
		changes = w.folders.Changes()
	}
	chores := time.NewTimer(time.Hour)
	defer chores.Stop()
	resume := time.NewTimer(time.Hour) // takes events again after eventGap
	resume.Stop()
	defer resume.Stop()
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	defer gap.Stop()
	soon := func() { // hands out the batch, at most once per gap
		if len(w.batch.Records) == 0 {
			return
		}
		gapFor := min(max(minBatchGap*time.Duration(w.lastRecords/gapRecords), minBatchGap), maxBatchGap)
		if wait := gapFor - time.Since(w.lastSent); wait > 0 {
			gap.Reset(wait)
			return
		}
		w.flush(ctx)
	}
	for {
		w.armChores(chores)
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			w.handleAll(ctx, ev, events)
			soon()
			events = nil
			resume.Reset(eventGap)
		case <-resume.C:
			events = w.fsw.Events
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
		case cs, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			w.handleFolders(ctx, cs)
			soon()
		case <-w.syncWake:
			w.runSyncs(ctx)
		case <-w.rewindWake:
			w.rewind(ctx)
		case <-w.ackWake:
			w.prune()
		case f := <-w.posts:
			f(ctx)
			soon()
		case <-gap.C:
			w.flush(ctx)
		case <-chores.C:
			w.doChores(ctx)
			soon()
		}
	}
}

// startEvents sets up the way changes are seen; without one, scans every
// Rescan find them.
func (w *Watcher) startEvents() {
	var err error
	switch {
	case w.opts.Events == EventsScan:
		return
	case w.opts.Events == EventsFolders || !fileEvents:
		roots := make([]string, len(w.roots))
		for i, r := range w.roots {
			roots[i] = r.Root
		}
		w.folders, err = newFolderSource(roots, w.opts.Latency, w.log)
	default:
		w.fsw, err = fsnotify.NewBufferedWatcher(eventBuffer)
	}
	if err != nil {
		w.log.Warn("cannot watch folders; scanning them every "+w.opts.Rescan.String()+" instead", "err", err)
		w.fsw, w.folders = nil, nil
	}
}

// blind reports whether some changes are seen only by scans: no folder
// events at all, a folder whose watch was refused, or a source that sees
// only the files it is told are hot.
func (w *Watcher) blind() bool {
	return w.fsw == nil && w.folders == nil || len(w.unwatched) > 0 || w.folders != nil && !w.folders.Complete()
}

// armChores sets t to the next chore due: closing a file idle for
// IdleClose, a log line owed for skipped lines, a database's second look
// after a change, a scan while blind. With
// none due it stays stopped: an idle watcher never wakes.
func (w *Watcher) armChores(t *time.Timer) {
	var next time.Duration = -1
	due := func(in time.Duration) {
		if next < 0 || in < next {
			next = max(in, 0)
		}
	}
	now := time.Now()
	if len(w.open) > 0 {
		if w.closeDue.IsZero() {
			for o := range w.open {
				if at := o.used.Add(w.opts.IdleClose); w.closeDue.IsZero() || at.Before(w.closeDue) {
					w.closeDue = at
				}
			}
		}
		due(w.closeDue.Sub(now))
	}
	clock := w.now()
	for t := range w.owed {
		due(t.bad.logged.Add(badLogEvery).Sub(clock))
	}
	for _, at := range w.relook {
		due(at.Sub(now))
	}
	if w.blind() {
		due(w.lastScan.Add(w.opts.Rescan).Sub(now))
	}
	if next < 0 {
		t.Stop()
		return
	}
	t.Reset(next)
}

// doChores does what armChores found due.
func (w *Watcher) doChores(ctx context.Context) {
	w.closeIdle()
	w.logUnloggedBad()
	now := time.Now()
	for t, at := range w.relook {
		if !now.Before(at) {
			delete(w.relook, t)
			w.read(ctx, t)
		}
	}
	if w.blind() && time.Since(w.lastScan) >= w.opts.Rescan {
		w.scanAll(ctx)
	}
}

// handleAll handles ev and the events already waiting after it, each path
// once, so that a busy moment gives one batch.
func (w *Watcher) handleAll(ctx context.Context, ev fsnotify.Event, events <-chan fsnotify.Event) {
	order, ops := w.eventOrder[:0], w.eventOps
	defer func() { clear(order); clear(ops); w.eventOrder = order[:0] }()
	for more := true; more; {
		if _, ok := ops[ev.Name]; !ok {
			order = append(order, ev.Name)
		}
		ops[ev.Name] |= ev.Op
		if len(order) >= batchRecords {
			break
		}
		select {
		case next, ok := <-events:
			ev, more = next, ok
		default:
			more = false
		}
	}
	for _, name := range order {
		w.handle(ctx, fsnotify.Event{Name: name, Op: ops[name]})
	}
}

// handle reacts to one folder event: reads the file it names, or watches and
// scans the folder it names.
func (w *Watcher) handle(ctx context.Context, ev fsnotify.Event) {
	if ev.Op&^fsnotify.Chmod == 0 {
		return
	}
	if t := w.tails[ev.Name]; t != nil && ev.Op&^(fsnotify.Write|fsnotify.Chmod) == 0 {
		t.seen = w.gen
		if !w.defers(t) {
			w.readWritten(ctx, t) // a followed file written: the common case, busy agents
		}
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
		} else if owner, set, ok := w.ownerOf(r, ev.Name, rel); ok {
			if t := w.tails[owner]; t == nil || !w.defers(t) {
				w.visit(ctx, r, owner, set, true)
			}
		}
		if ev.Has(fsnotify.Create) && r.leadsTo(rel) && w.isDir(ev.Name) {
			w.scanDir(ctx, r, ev.Name, rel)
		}
	}
}

// isDir reports whether name is a folder, following a link; a link that
// cannot be followed (a loop) is logged once.
func (w *Watcher) isDir(name string) bool {
	fi, err := os.Stat(name)
	if err == nil {
		return fi.IsDir()
	}
	if li, lerr := os.Lstat(name); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
		w.problem(name, "cannot follow link", err)
	}
	return false
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
// not find, and sends what it read.
func (w *Watcher) scanAll(ctx context.Context) {
	w.scanRoots(ctx)
	w.flush(ctx)
}

// scanRoots is scanAll without sending what it read.
func (w *Watcher) scanRoots(ctx context.Context) {
	w.gen++
	w.lastScan = time.Now()
	clear(w.unwatched) // the scan asks for each watch again
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
	if w.fsw == nil && w.folders == nil {
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
		delete(w.unwatched, dir)
		return
	case err != nil:
		w.problem(dir, "cannot read folder", err)
	default:
		w.recovered(dir)
	}
	// What each entry is, in order; the stats of its files are taken
	// together (statAll).
	type entry struct {
		name          string
		sub           []string
		set           FileSet
		isFile, leads bool
		isDir, link   bool
		stat          int // in stats, or -1
	}
	var todo []entry
	var files []string
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		sub := append(rel[:len(rel):len(rel)], e.Name())
		set, isFile := r.fileSet(sub)
		leads := r.leadsTo(sub)
		if !isFile && !leads {
			continue
		}
		en := entry{name: name, sub: sub, set: set, isFile: isFile, leads: leads, isDir: e.IsDir(), link: e.Type()&fs.ModeSymlink != 0, stat: -1}
		if isFile && !en.isDir && !en.link && !w.fires(set) {
			en.stat = len(files)
			files = append(files, e.Name())
		}
		todo = append(todo, en)
	}
	stats := statAll(dir, files)
	for _, en := range todo {
		if ctx.Err() != nil {
			return
		}
		isDir := en.isDir
		if en.link {
			fi, err := os.Stat(en.name)
			if err != nil {
				w.problem(en.name, "cannot follow link", err)
				continue
			}
			isDir = fi.IsDir()
		}
		switch {
		case isDir && en.leads:
			w.scanDir(ctx, r, en.name, en.sub)
		case !isDir && en.isFile && en.stat >= 0:
			w.visitStat(ctx, r, en.name, en.set, stats[en.stat])
		case !isDir && en.isFile:
			w.visit(ctx, r, en.name, en.set, false)
		}
	}
}

// statAll stats the files of dir by name, on as many threads as Go code
// may run on (up to four) when there are many: a start stats every file of
// the history on every core; once the daemon has settled on one core
// (cmd/nudge), a later rescan stats on one. Each is stat-ed relative to the
// folder, which costs a fifth less than by its whole path; one that cannot
// be (a link that leads out of the folder) by its whole path.
func statAll(dir string, names []string) []stat {
	out := make([]stat, len(names))
	folder, err := os.OpenRoot(dir)
	if err == nil {
		defer folder.Close()
	}
	statOne := func(i int) {
		if folder != nil {
			fi, err := folder.Stat(names[i])
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				out[i] = stat{fi, err}
				return
			}
		}
		out[i].fi, out[i].err = os.Stat(filepath.Join(dir, names[i]))
	}
	const chunk = 64
	workers := min(runtime.GOMAXPROCS(0), 4, (len(names)+chunk-1)/chunk)
	var next atomic.Int64
	work := func() {
		for {
			from := int(next.Add(chunk)) - chunk
			if from >= len(names) {
				return
			}
			for i := from; i < min(from+chunk, len(names)); i++ {
				statOne(i)
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return out
}

// watchDir adds a folder watch (never a file watch) on dir.
func (w *Watcher) watchDir(dir string) {
	if w.dirs[dir] {
		return
	}
	var err error
	switch {
	case w.fsw != nil:
		err = w.fsw.Add(dir)
	case w.folders != nil:
		err = w.folders.Add(dir)
	}
	if err != nil {
		w.problem(dir, "cannot watch folder; scans every "+w.opts.Rescan.String()+" will find its changes", err)
		w.unwatched[dir] = true
		return
	}
	delete(w.unwatched, dir)
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
	for d := range w.unwatched {
		if _, below := under(dir, d); d == dir || below {
			delete(w.unwatched, d)
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
	delete(w.unwatched, dir)
	switch {
	case w.fsw != nil:
		_ = w.fsw.Remove(dir) // the kernel drops the watch of a deleted folder itself
	case w.folders != nil:
		w.folders.Remove(dir)
	}
}

// goneWhileAway reports snapshot files of the last run that are gone now;
// the caller sends them.
func (w *Watcher) goneWhileAway(ctx context.Context) {
	if w.storedFollowed == len(w.opts.Positions) {
		return // every path of the last run is followed
	}
	var paths []string // in order: those the scan did not find
	for p := range w.opts.Positions {
		if w.tails[p] == nil {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, r := range w.roots {
			rel, ok := under(r.Root, p)
			if !ok {
				continue
			}
			set, ok := r.fileSet(rel)
			if _, tells := w.sourceOf(set.Kind).(goneTeller); !ok || !tells {
				continue
			}
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				w.emitGone(ctx, Record{Agent: r.Agent, Path: p, File: w.opts.Positions[p].File, Gone: true})
			}
			break
		}
	}
}

// problem shows a path's error in Stats until the path recovers, and logs
// it once, and again only problemRetell later: a path that fails and
// recovers over and over (names swapped under nudge) is not told each time.
func (w *Watcher) problem(p, msg string, err error) {
	now := time.Now()
	w.problemMu.Lock()
	_, known := w.problems[p]
	if !known {
		w.problems[p] = Stuck{Source: p, Since: now, Err: msg + ": " + err.Error()}
	}
	w.problemMu.Unlock()
	if known {
		return
	}
	w.statsChanged()
	if at, ok := w.problemTold[p]; ok && now.Sub(at) < problemRetell {
		return
	}
	for q, at := range w.problemTold {
		if now.Sub(at) >= problemRetell {
			delete(w.problemTold, q)
		}
	}
	w.problemTold[p] = now
	w.log.Warn(msg, "path", p, "err", err)
}

// problemRetell is how long after a path's problem was logged the next one
// of that path is logged again.
const problemRetell = time.Minute

// recovered ends p's problem, if it had one.
func (w *Watcher) recovered(p string) {
	w.problemMu.Lock()
	_, known := w.problems[p]
	delete(w.problems, p)
	w.problemMu.Unlock()
	if known {
		w.statsChanged()
	}
}

// stuck are the sources that cannot be read now: the hosts that do not
// answer and the paths with a problem, the oldest first, at most
// maxSkippedFiles of them.
func (w *Watcher) stuck() []Stuck {
	var out []Stuck
	for _, src := range w.sources {
		if s, ok := src.(stucker); ok {
			out = append(out, s.stuck()...)
		}
	}
	w.problemMu.Lock()
	for _, s := range w.problems {
		out = append(out, s)
	}
	w.problemMu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Source < out[j].Source
	})
	return out[:min(len(out), maxSkippedFiles)]
}
