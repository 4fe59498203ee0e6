// Package daemon wires the pipe together: it runs the watcher, feeds records
// through the classifiers into each session's retry machine, stores what
// happened, and carries out the machine's actions.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"nudge/internal/classify"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/notify"
	"nudge/internal/private"
	"nudge/internal/retry"
	"nudge/internal/status"
	"nudge/internal/version"
	"nudge/internal/watch"
	"nudge/internal/web"
)

// Meta keys in the database.
const (
	metaInitialized = "watch.initialized" // a first scan completed once: later starts read new files from line 1
	metaRetry       = "settings.retry_enabled"
	metaContinue    = "settings.continue_after_usage_limit"
	metaPaused      = "settings.paused"
)

// statsEvery is how often the view's file counts are refreshed once the
// first scan is done (before, every 200 ms, to report readiness promptly).
const statsEvery = 2 * time.Second

// syncTimeout bounds how long a due retry waits for its transcript to be
// re-read before the machine decides on what it already knows; it is kept
// as the session's wake while the re-read is under way.
const syncTimeout = 3 * time.Second

// Daemon is one running nudge.
type Daemon struct {
	lock     *instanceLock
	cfg      config.Config
	log      *slog.Logger
	db       *inbox.DB
	watcher  *watch.Watcher
	injector *inject.Injector
	notifier *notify.Notifier
	started  time.Time
	now      func() time.Time

	// Owned by the loop goroutine.
	settings retry.Settings
	sessions map[retry.Key]*session
	readers  map[string]classify.Reader
	lastRead map[string]time.Time // when each file last gave a record
	wakes    wakeQueue
	// calls carries work onto the loop from other goroutines.
	calls chan func()
	quit  chan struct{}
	once  sync.Once
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
		lock:     lock,
		cfg:      cfg,
		log:      log,
		now:      time.Now,
		sessions: map[retry.Key]*session{},
		readers:  map[string]classify.Reader{},
		lastRead: map[string]time.Time{},
		calls:    make(chan func(), 64),
		quit:     make(chan struct{}),
	}
	return d, nil
}

// Run runs the daemon until ctx ends or Quit is called.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.lock.release()

	db, err := inbox.Open(filepath.Join(d.cfg.DataDir, "nudge.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	d.db = db
	d.started = d.now()

	if err := d.loadSettings(ctx); err != nil {
		return err
	}
	positions, err := db.Positions(ctx)
	if err != nil {
		return err
	}
	_, initialized, err := db.Meta(ctx, metaInitialized)
	if err != nil {
		return err
	}
	sources := watch.Sources(d.roots())
	for i := range sources {
		sources[i].FirstLook = !initialized
	}
	w, err := watch.New(watch.Options{
		Sources:   sources,
		Positions: watchPositions(positions),
		LineCap:   int(d.cfg.Watch.LineCap),
		Rescan:    d.cfg.Watch.Rescan,
		Logger:    d.log.With("stage", "watch"),
	})
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	d.watcher = w
	if d.injector, err = NewInjector(d.cfg); err != nil {
		return err
	}
	d.notifier = notify.New(notify.Config{
		Desktop:    d.cfg.Notify.Desktop,
		NtfyURL:    d.cfg.Notify.Ntfy.URL,
		WebhookURL: d.cfg.Notify.Webhook.URL,
	}, d.log.With("stage", "notify"))
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = d.notifier.Close(cctx)
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

	watchDone := make(chan error, 1)
	go func() { watchDone <- w.Run(ctx) }()
	d.log.Info("nudge started", "pid", os.Getpid(), "version", version.String(), "data", d.cfg.DataDir, "first_run", !initialized)
	err = d.loop(ctx)
	d.Quit() // callers waiting on the loop (Change, Unread) give up
	cancel()
	d.offLoop.Wait()
	if werr := <-watchDone; werr != nil && !errors.Is(werr, context.Canceled) && err == nil {
		err = werr
	}
	d.log.Info("nudge stopped")
	return err
}

// Quit asks the daemon to stop.
func (d *Daemon) Quit() { d.once.Do(func() { close(d.quit) }) }

func (d *Daemon) roots() map[string]string {
	roots := map[string]string{}
	for name, a := range d.cfg.Agents {
		if !a.Enabled {
			continue
		}
		if _, ok := classify.Lookup(name); !ok {
			continue
		}
		roots[name] = a.Root
	}
	return roots
}

func watchPositions(stored map[string]inbox.Position) map[string]watch.Position {
	out := make(map[string]watch.Position, len(stored))
	for path, p := range stored {
		out[path] = watch.Position{Path: path, File: watch.FileID{Dev: p.Dev, Inode: p.Inode, Fingerprint: p.Fingerprint}, Offset: p.Offset, Mark: p.Mark}
	}
	return out
}

// loop is the one goroutine that owns the sessions and their machines.
func (d *Daemon) loop(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ready := false
	readyTick := time.NewTicker(200 * time.Millisecond)
	defer readyTick.Stop()
	liveTick := time.NewTicker(liveCheckEvery)
	defer liveTick.Stop()
	for {
		d.armTimer(timer)
		select {
		case <-ctx.Done():
			return nil
		case <-d.quit:
			return nil
		case b, ok := <-d.watcher.Batches():
			if !ok {
				return nil
			}
			d.handleBatch(ctx, b)
		case <-timer.C:
			d.handleWakes(ctx)
		case f := <-d.calls:
			f()
		case <-liveTick.C:
			d.settleQuietFiles(ctx)
			d.checkLiveness(ctx)
		case <-readyTick.C:
			if !ready && d.watcher.Ready() {
				ready = true
				// Sessions refresh the view when they change; the tick only
				// keeps the file counts current from now on.
				readyTick.Reset(statsEvery)
				if err := d.db.SetMeta(ctx, metaInitialized, d.now().UTC().Format(time.RFC3339)); err != nil {
					d.log.Error("store first-scan marker", "err", err)
				}
			}
			d.refreshView()
		}
	}
}

func (d *Daemon) armTimer(t *time.Timer) {
	wait := time.Hour
	if next, ok := d.wakes.next(); ok {
		wait = max(next.Sub(d.now()), 0)
	}
	t.Reset(wait)
}

// step collects what one round of the loop changed, to be stored in one
// transaction and then acted on.
type step struct {
	batch   inbox.Batch
	touched map[retry.Key]bool
	injects []*session // whose continuation is batch.Attempts[i]
	notices []retry.Notify
}

func newStep() *step { return &step{touched: map[retry.Key]bool{}} }

func (d *Daemon) handleBatch(ctx context.Context, b watch.Batch) {
	now := d.now()
	st := newStep()
	last := map[string]watch.Record{}
	for _, rec := range b.Records {
		d.handleRecord(rec, now, st)
		if !rec.Gone {
			last[rec.Path] = rec
		}
	}
	for _, rec := range last {
		p := rec.Position()
		st.batch.Positions = append(st.batch.Positions, inbox.Position{
			Path: p.Path, Dev: p.File.Dev, Inode: p.File.Inode, Fingerprint: p.File.Fingerprint, Offset: p.Offset, Mark: p.Mark,
		})
	}
	if b.Synced != "" {
		for _, s := range d.sessions {
			if !s.syncing.IsZero() && s.transcript == b.Synced {
				s.syncing = time.Time{}
				delete(d.wakes, s.key) // the re-read's timeout; Tick asks again for what it still needs
				d.apply(s, s.machine.Tick(now, d.settings), now, st)
			}
		}
	}
	d.finish(ctx, st, now)
}

func (d *Daemon) handleRecord(rec watch.Record, now time.Time, st *step) {
	if rec.Checkpoint {
		return
	}
	r, ok := d.readers[rec.Path]
	if !ok {
		agent, found := classify.Lookup(rec.Agent)
		if !found {
			d.log.Warn("record from an unknown agent", "agent", rec.Agent, "path", rec.Path)
			return
		}
		r = agent.NewReader(rec.Path)
		d.readers[rec.Path] = r
	}
	events := r.Read(rec.Line)
	d.lastRead[rec.Path] = now
	if rec.Gone {
		delete(d.readers, rec.Path)
		delete(d.lastRead, rec.Path)
	}
	for _, ev := range events {
		d.observe(ev, rec.Path, now, st)
	}
}

func (d *Daemon) observe(ev classify.Event, path string, now time.Time, st *step) {
	if ev.Session == "" {
		return
	}
	s := d.session(retry.Key{Agent: ev.Agent, Session: ev.Session})
	if ev.Process != nil {
		p := *ev.Process
		s.process, s.registry = &p, path
	} else {
		s.transcript = path
	}
	if ev.Project != "" {
		s.project = ev.Project
	}
	st.batch.Events = append(st.batch.Events, eventRow(ev, now))
	d.apply(s, s.machine.Observe(ev, now, d.settings), now, st)
}

func eventRow(ev classify.Event, now time.Time) inbox.EventRow {
	row := inbox.EventRow{
		Agent: ev.Agent, Session: ev.Session, Project: ev.Project,
		Time: ev.Time, DetectedAt: now, Kind: string(ev.Kind),
	}
	if f := ev.Failure; f != nil {
		row.Class, row.Code, row.Message, row.ResetAt = string(f.Class), f.Code, f.Message, f.ResetAt
	}
	switch {
	case ev.Box != "":
		row.Detail = ev.Box
	case ev.Process != nil:
		row.Detail = fmt.Sprintf("pid %d %s", ev.Process.PID, ev.Process.Status)
	}
	return row
}

// session returns the daemon's memory of key, restoring or creating it.
func (d *Daemon) session(key retry.Key) *session {
	if s, ok := d.sessions[key]; ok {
		return s
	}
	s := &session{key: key, machine: retry.NewSession(key)}
	d.sessions[key] = s
	return s
}

// apply turns a machine's actions into stored rows and pending effects.
func (d *Daemon) apply(s *session, acts []retry.Action, now time.Time, st *step) {
	st.touched[s.key] = true
	s.updated = now
	for _, a := range acts {
		switch a := a.(type) {
		case retry.Inject:
			st.injects = append(st.injects, s)
			st.batch.Attempts = append(st.batch.Attempts, inbox.AttemptRow{
				Agent: s.key.Agent, Session: s.key.Session, Episode: s.machine.Episode(), Attempt: a.Attempt, Text: a.Text, Started: now,
			})
		case retry.Notify:
			st.notices = append(st.notices, a)
		case retry.Entry:
			st.batch.Entries = append(st.batch.Entries, inbox.EntryRow{
				Time: now, Agent: a.Key.Agent, Session: a.Key.Session, Project: firstNonEmpty(a.Project, s.project),
				What: a.What, ErrorText: a.Failure.Message, Class: string(a.Failure.Class), Code: a.Failure.Code, Attempts: a.Attempts,
			})
		case retry.Wake:
			d.wakes.add(s.key, a.At)
		case retry.SetState:
			// The machine's state is stored with the session row below.
		case retry.Decision:
			st.batch.Decisions = append(st.batch.Decisions, inbox.DecisionRow{Agent: s.key.Agent, Session: s.key.Session, Time: now, What: a.What})
		}
	}
}

// finish stores the step in one transaction, then acts on it.
func (d *Daemon) finish(ctx context.Context, st *step, now time.Time) {
	for key := range st.touched {
		s := d.sessions[key]
		state, until := s.machine.State()
		blob, err := json.Marshal(s.machine)
		if err != nil {
			d.log.Error("encode session state", "session", key.Session, "err", err)
			continue
		}
		st.batch.Sessions = append(st.batch.Sessions, inbox.SessionRow{
			Agent: key.Agent, Session: key.Session, Project: s.project, Path: s.transcript,
			State: string(state), Note: s.machine.Note(), Until: until, UpdatedAt: now, Machine: blob,
		})
	}
	err := d.db.Commit(ctx, st.batch)
	if err != nil {
		// The positions were not stored either: after a restart these
		// records are read again, so nothing is lost.
		d.log.Error("store events", "err", err, "events", len(st.batch.Events))
	}
	for _, n := range st.notices {
		d.notifier.Send(notify.Message{
			Title: n.Title, Body: n.Body, Agent: n.Key.Agent, Project: firstNonEmpty(n.Project, d.projectOf(n.Key)),
			Session: n.Key.Session, Urgent: true,
		})
	}
	for i, s := range st.injects {
		a := st.batch.Attempts[i]
		switch {
		case err != nil:
			d.delivered(ctx, s, a.Attempt, 0, inject.Delivery{}, fmt.Errorf("could not record the attempt: %w", err))
		case a.ID == 0:
			d.log.Warn("attempt already made; not sending it again", "session", s.key.Session, "attempt", a.Attempt)
			d.delivered(ctx, s, a.Attempt, 0, inject.Delivery{}, errors.New("this attempt was already made once; it is not sent again, to never type twice"))
		default:
			d.startInject(ctx, s, a)
		}
	}
	if len(st.touched) > 0 {
		d.refreshView()
	}
}

func (d *Daemon) projectOf(k retry.Key) string {
	if s, ok := d.sessions[k]; ok {
		return s.project
	}
	return ""
}

// handleWakes re-reads the transcript of every session whose wake is due;
// its machine decides once the fresh records are in (SPEC §3 step 2).
func (d *Daemon) handleWakes(ctx context.Context) {
	now := d.now()
	st := newStep()
	for _, key := range d.wakes.due(now) {
		s, ok := d.sessions[key]
		switch {
		case !ok:
		case s.syncing.IsZero() && s.transcript != "":
			s.syncing = now
			d.watcher.Sync(s.transcript)
			d.wakes.add(key, now.Add(syncTimeout))
		case s.syncing.IsZero():
			d.apply(s, s.machine.Tick(now, d.settings), now, st)
		case now.Sub(s.syncing) >= syncTimeout:
			d.log.Warn("transcript re-read did not answer; deciding on what is known", "session", s.key.Session)
			s.syncing = time.Time{}
			d.apply(s, s.machine.Tick(now, d.settings), now, st)
		default:
			d.wakes.add(key, s.syncing.Add(syncTimeout))
		}
	}
	d.finish(ctx, st, now)
}

// restore brings back every session's machine and settles attempts that a
// crash left "sending": they are never sent again, and the person is told.
func (d *Daemon) restore(ctx context.Context) error {
	rows, err := d.db.Sessions(ctx)
	if err != nil {
		return err
	}
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
	}
	unfinished, err := d.db.Unfinished(ctx)
	if err != nil {
		return err
	}
	for _, a := range unfinished {
		s := d.session(retry.Key{Agent: a.Agent, Session: a.Session})
		d.log.Warn("an attempt was interrupted by a restart; not sending it again", "session", a.Session, "attempt", a.Attempt)
		d.delivered(ctx, s, a.Attempt, a.ID, inject.Delivery{}, errors.New("nudge stopped while delivering this continuation; it is not sent again, to never type twice"))
	}
	d.refreshView()
	return nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
