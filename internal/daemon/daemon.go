// Package daemon wires the pipe together: it runs the watcher, feeds records
// through the classifiers into each session's retry machine, stores what
// happened, and carries out the machine's actions.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/memory"
	"nudge/internal/notify"
	"nudge/internal/outage"
	"nudge/internal/private"
	"nudge/internal/proc"
	"nudge/internal/retry"
	"nudge/internal/status"
	"nudge/internal/version"
	"nudge/internal/watch"
	"nudge/internal/web"
)

// Meta keys in the database.
const (
	// metaLooked + "<agent>:<root>": the first look at that root is stored
	// (docs/durability.md).
	metaLooked   = "watch.looked:"
	metaRetry    = "settings.retry_enabled"
	metaContinue = "settings.continue_after_usage_limit"
	metaPaused   = "settings.paused"
)

// positionEvery: a file whose lines store nothing (an agent at work) has
// its position stored at most this often; a restart reads those lines
// again, and they store nothing again (docs/durability.md).
const positionEvery = 30 * time.Second

// Once the first scan is stored, and again once what was read or asked
// since has been quiet this long, the daemon gives back the memory it no
// longer uses (docs/performance.md §3): giveBackAfter records, which come
// in spells while an agent works; GiveBackAfterRequest a request (the CLI,
// the Inbox window), which a person makes now and then (bench/perf waits
// for it).
const (
	giveBackAfter        = 2 * time.Minute
	GiveBackAfterRequest = 10 * time.Second
)

// syncTimeout bounds how long a due retry waits for its transcript to be
// re-read before the machine decides on what it already knows; it is kept
// as the session's wake while the re-read is under way.
const syncTimeout = 3 * time.Second

// Daemon is one running nudge.
type Daemon struct {
	lock    *instanceLock
	cfg     config.Config
	log     *slog.Logger
	db      *inbox.DB // the Inbox window and the menu read it
	started time.Time

	// The core's edges (edges.go).
	store   store
	source  source
	deliver deliverer
	notify  notifier
	now     func() time.Time

	// Owned by the loop goroutine.
	settings retry.Settings
	sessions map[retry.Key]*session
	outages  *outage.Tracker        // the providers' outages (outages.go)
	files    map[string]*fileReader // the reader of each file read, by path
	// shapes counts the failure record shapes nudge does not know (logged.go).
	shapes map[shapeKey]*status.UnknownShape
	// handleBatch's working space, kept from one batch to the next: a busy
	// agent's batches come many a second.
	found      []found
	recordHash hash.Hash // sha256, reset for each record (recordIdentity)
	recordSum  []byte    // its last sum
	wakes      wakeQueue
	// liveDue: when each quiet open turn's process is looked for;
	// settleDue: when each quiet file's reader judges what it read
	// (liveness.go). One timer in the loop serves them and the wakes.
	liveDue   map[retry.Key]time.Time
	settleDue map[string]time.Time
	// positioned: when each file read since the start last had its
	// position stored (handleBatch).
	positioned map[string]time.Time
	// viewBuilt: when the view was last rebuilt (the machine's clock);
	// viewDue: when a change held back by viewGap is shown (view.go).
	viewBuilt, viewDue time.Time
	// giveBackAt: when memory is next given back (giveBack); zero when
	// nothing was read or asked since.
	giveBackAt time.Time
	// settle runs once the first scan is stored (OnSettled); nil once run.
	settle func()
	// viewExpires: when a session shown for being recent leaves the views.
	viewExpires time.Time
	// ready: the first scan is done and stored; until then, what is read
	// was written while nudge was not running, and no wake is acted on.
	ready bool
	// looks are the first-look marks stored with the end of the first scan.
	looks []inbox.MetaRow
	// epoch: batches read before the latest Rewind are ignored.
	epoch uint64
	// failing is set while the store refuses writes; redo are the steps
	// (delivery outcomes) to take again once it works (store.go).
	failing *failing
	redo    []func(context.Context)
	// interrupted are attempts a stop cut while typing, settled once the
	// first scan shows whether the agent received them (deliver.go).
	interrupted []inbox.AttemptRow
	// calls carries work onto the loop from other goroutines.
	calls chan func()
	// used: a request was answered (Used).
	used chan struct{}
	quit chan struct{}
	once sync.Once
	// offLoop counts the deliveries and liveness probes running off the
	// loop; Run waits for them before it closes the database and lock.
	offLoop sync.WaitGroup

	mu      sync.Mutex // guards view and changed
	view    status.Status
	changed chan struct{}

	window atomic.Pointer[web.Server] // the running Inbox window (web.go)
}

// session is the daemon's memory of one session.
type session struct {
	key        retry.Key
	machine    *retry.Session
	project    string
	transcript string            // the file its turns are read from
	registry   string            // the live registry file, if the agent has one
	process    *classify.Process // the last live-registry picture
	syncing    time.Time         // when a pre-send re-read was asked for (zero: none)
	probing    bool              // a liveness check is under way
	exit       *proc.Exit        // the watch on its process's end, once found
	liveTries  int               // liveness checks that could not tell
	updated    time.Time
}

// New prepares a daemon: it takes the single-instance lock, so a second
// daemon is refused before it shows or logs anything. Run starts it and
// releases the lock when it returns.
func New(cfg config.Config, log *slog.Logger) (*Daemon, error) {
	if err := private.Folder("data folder", cfg.DataDir); err != nil {
		return nil, err
	}
	lock, err := lockInstance(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	d := &Daemon{
		lock:       lock,
		cfg:        cfg,
		log:        log,
		now:        time.Now,
		sessions:   map[retry.Key]*session{},
		outages:    outage.New(0, nil),
		files:      map[string]*fileReader{},
		shapes:     map[shapeKey]*status.UnknownShape{},
		liveDue:    map[retry.Key]time.Time{},
		settleDue:  map[string]time.Time{},
		positioned: map[string]time.Time{},
		calls:      make(chan func(), 64),
		used:       make(chan struct{}, 1),
		quit:       make(chan struct{}),
	}
	return d, nil
}

// Run opens the database and runs the daemon until ctx ends or Quit is
// called.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.lock.release()

	stored := lastWrite(filepath.Join(d.cfg.DataDir, "nudge.db"))
	db, err := inbox.Open(filepath.Join(d.cfg.DataDir, "nudge.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	d.db, d.store = db, db
	d.started = d.now()

	if err := d.loadSettings(ctx); err != nil {
		return err
	}
	w, err := d.newWatcher(ctx, stored)
	if err != nil {
		return err
	}
	if d.deliver, err = NewInjector(d.cfg, d.log); err != nil {
		return err
	}
	notifier := notify.New(notify.Config{
		Desktop:    d.cfg.Notify.Desktop,
		NtfyURL:    d.cfg.Notify.Ntfy.URL,
		WebhookURL: d.cfg.Notify.Webhook.URL,
	}, d.log.With("stage", "notify"))
	d.notify = notifier
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = notifier.Close(cctx)
	}()

	if err := d.restore(ctx); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopControl, err := serveControl(ctx, SocketPath(d.cfg.DataDir), d, d.log.With("stage", "control"))
	if err != nil {
		return err
	}
	defer stopControl()
	stopInbox, err := d.serveInbox(ctx)
	if err != nil {
		return err
	}
	defer stopInbox()

	d.log.Info("nudge started", "version", version.String(), "data", d.cfg.DataDir, "first_looks", len(d.looks))
	err = d.serve(ctx, w)
	d.log.Info("nudge stopped")
	return err
}

// newWatcher builds the watcher over the enabled agents' roots, from the
// stored positions.
func (d *Daemon) newWatcher(ctx context.Context, stored time.Time) (*watch.Watcher, error) {
	positions, err := d.store.Positions(ctx)
	if err != nil {
		return nil, err
	}
	sources, err := d.sources(ctx)
	if err != nil {
		return nil, err
	}
	w, err := watch.New(watch.Options{
		Sources:   sources,
		Positions: watchPositions(positions),
		Stored:    stored,
		LineCap:   int(d.cfg.Watch.LineCap),
		Rescan:    d.cfg.Watch.Rescan,
		Events:    d.cfg.Watch.Events,
		Latency:   d.cfg.Watch.Latency,
		Logger:    d.log.With("stage", "watch"),
	})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	d.source = w
	return w, nil
}

// lastWrite is when the database at path was last written, before this
// run opens it: the newest modification time of it and its write-ahead
// log, less a second for coarse clocks (zero when there is none).
func lastWrite(path string) time.Time {
	var last time.Time
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	if last.IsZero() {
		return last
	}
	return last.Add(-time.Second)
}

// serve runs the watcher w and the loop until ctx ends or Quit is called,
// then waits for the work running off the loop.
func (d *Daemon) serve(ctx context.Context, w *watch.Watcher) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchDone := make(chan error, 1)
	go func() { watchDone <- w.Run(ctx) }()
	err := d.loop(ctx)
	d.Quit() // callers waiting on the loop (Change, Unread) give up
	cancel()
	d.offLoop.Wait()
	if werr := <-watchDone; werr != nil && !errors.Is(werr, context.Canceled) && err == nil {
		err = werr
	}
	return err
}

// Quit asks the daemon to stop.
func (d *Daemon) Quit() { d.once.Do(func() { close(d.quit) }) }

// roots are the watched agents' roots: every agent of the registry that the
// settings do not turn off, at its configured root ("" = its own).
func (d *Daemon) roots() map[string]string {
	roots := map[string]string{}
	for _, a := range classify.Agents() {
		if s := d.cfg.Agent(a.Name); s.Enabled {
			roots[a.Name] = s.Root
		}
	}
	return roots
}

// sources are the watched roots, each at its first look unless a mark says
// it was looked at before; the marks still missing are kept in d.looks, to
// be stored with the end of the first scan.
func (d *Daemon) sources(ctx context.Context) ([]watch.Source, error) {
	sources := watch.Sources(d.roots())
	stamp := d.now().UTC().Format(time.RFC3339)
	for i, src := range sources {
		key := metaLooked + src.Agent + ":" + src.Root
		_, looked, err := d.store.Meta(ctx, key)
		if err != nil {
			return nil, err
		}
		if !looked {
			sources[i].FirstLook = true
			d.looks = append(d.looks, inbox.MetaRow{Key: key, Value: stamp})
		}
	}
	return sources, nil
}

func watchPositions(stored []inbox.Position) map[string]watch.Position {
	out := make(map[string]watch.Position, len(stored))
	for _, p := range stored {
		out[p.Path] = watch.Position{Path: p.Path, File: watch.FileID{Dev: p.Dev, Inode: p.Inode, Fingerprint: p.Fingerprint}, Offset: p.Offset, Mark: p.Mark}
	}
	return out
}

// loop is the one goroutine that owns the sessions and their machines.
// While the store refuses writes it takes no records and acts on no wake
// until the next try (store.go). It has no ticker: it wakes for a batch,
// a call, a change of the watcher's counts, or its one timer, armed for
// the next thing due (armTimer); idle, it sleeps.
func (d *Daemon) loop(ctx context.Context) error {
	defer memory.Wake()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	stats := d.source.StatsChanged()
	for {
		d.armTimer(timer)
		batches := d.source.Batches()
		if d.holding() {
			batches = nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.quit:
			return nil
		case b, ok := <-batches:
			if !ok {
				return nil
			}
			d.handleBatch(ctx, b)
		case <-timer.C:
			d.handleTimer(ctx)
		case f := <-d.calls:
			f()
		case <-d.used:
			d.worked()
		case <-stats:
			d.viewChanged()
		}
		if !d.giveBackAt.IsZero() && !d.now().Before(d.giveBackAt) {
			d.giveBack(ctx)
		}
	}
}

// giveBack returns to the system what the daemon holds but no longer
// uses: after the first scan, what it built (a position per file, its
// batch and transaction); after a busy spell or requests, the heap they
// grew and the pages of the program they mapped (docs/performance.md §3).
// Then the collector rests until there is work again.
func (d *Daemon) giveBack(ctx context.Context) {
	d.giveBackAt = time.Time{}
	start := time.Now()
	if settle := d.settle; settle != nil {
		d.settle = nil
		settle()
	}
	if err := d.store.Shrink(ctx); err != nil {
		d.log.Debug("cannot shrink the database's cache", "err", err)
	}
	// The first collection only sets aside what waits in pools (the line
	// blocks of the batches read meanwhile); the second, FreeOSMemory's,
	// frees it with the rest.
	runtime.GC()
	debug.FreeOSMemory()
	memory.Rest()
	// Last: whatever runs in between maps pages of the program back, 64 KB
	// or more for each page it reads (changing the collector's settings
	// stops the world: about 3 MB).
	n, err := memory.ReleaseProgram()
	if err != nil {
		d.log.Debug("cannot give back the program's pages", "err", err)
	}
	d.log.Debug("gave memory back", "program_bytes", n, "took", time.Since(start))
}

// working wakes the collector (memory.Wake) and gives back what the work
// grows at the later of at and the give-back already due.
func (d *Daemon) working(at time.Time) {
	memory.Wake()
	if at.After(d.giveBackAt) {
		d.giveBackAt = at
	}
}

// worked counts a request answered or an answer handed to the loop from
// off it (a liveness check's, a delivery's) as work: the collector wakes,
// and what it ran is given back once quiet for GiveBackAfterRequest.
func (d *Daemon) worked() {
	if d.ready {
		d.working(d.now().Add(GiveBackAfterRequest))
	}
}

// Used tells the loop that a request was answered (the CLI, the Inbox
// window): what it ran is given back once that, too, is quiet.
func (d *Daemon) Used() {
	select {
	case d.used <- struct{}{}:
	default:
	}
}

// OnSettled sets f to run once, on the loop, when the first scan is
// stored, before what it built is given back: from then on the daemon only
// follows changes. Call it before Run.
func (d *Daemon) OnSettled(f func()) { d.settle = f }

// armTimer sets the loop's one timer: the next try of a failing store while
// it holds; else, once the first scan is stored, the next wake, liveness
// check or quiet file due; and the next session to leave the views. With
// nothing due it is stopped.
func (d *Daemon) armTimer(t *time.Timer) {
	var next time.Time
	due := func(at time.Time) {
		if !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	switch {
	case d.holding():
		due(d.failing.next)
	case len(d.redo) > 0:
		due(d.now())
	case d.ready:
		at, _ := d.wakes.next()
		due(at)
		for _, at := range d.liveDue {
			due(at)
		}
		for _, at := range d.settleDue {
			due(at)
		}
		due(d.giveBackAt)
	}
	due(d.viewExpires)
	wait := time.Duration(-1)
	if !next.IsZero() {
		wait = max(next.Sub(d.now()), 0)
	}
	if !d.viewDue.IsZero() && (wait < 0 || time.Until(d.viewDue) < wait) {
		wait = max(time.Until(d.viewDue), 0)
	}
	if wait < 0 {
		t.Stop()
		return
	}
	t.Reset(wait)
}

// handleTimer takes again the steps a failing store refused, then acts on
// what is due: wakes, quiet files, liveness checks, the views.
func (d *Daemon) handleTimer(ctx context.Context) {
	if !d.viewExpires.IsZero() && !d.now().Before(d.viewExpires) || !d.viewDue.IsZero() && !time.Now().Before(d.viewDue) {
		d.refreshView()
	}
	if d.holding() {
		return
	}
	d.redoSteps(ctx)
	if d.ready && !d.holding() {
		d.handleWakes(ctx)
		d.settleQuietFiles(ctx)
		d.checkLiveness(ctx)
	}
}

// restore brings back every session's machine, tells what fell due too long
// ago while nudge was not running, and settles attempts that a stop left
// "sending": they are never sent again, and the person is told (deliver.go).
func (d *Daemon) restore(ctx context.Context) error {
	if err := d.restoreOutages(ctx); err != nil {
		return err
	}
	rows, err := d.store.Sessions(ctx)
	if err != nil {
		return err
	}
	now := d.now()
	st := newStep()
	for _, row := range rows {
		key := retry.Key{Agent: row.Agent, Session: row.Session}
		m := retry.NewSession(key)
		if len(row.Machine) > 0 {
			if err := json.Unmarshal(row.Machine, m); err != nil {
				d.log.Warn("session state unreadable; starting it fresh", "session", row.Session, "err", err)
				m = retry.NewSession(key)
			}
		}
		s := &session{key: key, machine: m, project: row.Project, transcript: row.Path, updated: row.UpdatedAt}
		d.sessions[key] = s
		if at, ok := m.NextWake(); ok {
			d.wakes.add(key, at)
		}
		d.scheduleLiveCheck(s)
		st.keep(s)
		if acts := m.Restored(now, d.settings); len(acts) > 0 {
			d.apply(s, acts, now, st)
		}
	}
	d.finish(ctx, st, now)
	unfinished, err := d.store.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, a := range unfinished {
		s := d.session(retry.Key{Agent: a.Agent, Session: a.Session})
		if !a.Typing.IsZero() {
			d.interrupted = append(d.interrupted, a)
			continue
		}
		d.log.Warn("an attempt was stopped before typing began; not sending it again", "session", a.Session, "attempt", a.Attempt)
		d.delivered(ctx, s, a.Attempt, a.ID, inject.Delivery{}, advice.Why{Cause: advice.Stopped})
	}
	d.refreshView()
	return nil
}

// session returns the daemon's memory of key, creating it.
func (d *Daemon) session(key retry.Key) *session {
	if s, ok := d.sessions[key]; ok {
		return s
	}
	s := &session{key: key, machine: retry.NewSession(key)}
	d.sessions[key] = s
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
