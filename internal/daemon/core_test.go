package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"nudge/internal/advice"
	"nudge/internal/config"
	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/notify"
	"nudge/internal/retry"
	"nudge/internal/status"
)

// The tests of the daemon's promises run its real loop, its real watcher on
// real files and a real database, with fakes only where the machine ends: a
// store that can refuse writes, a terminal, the notification server and
// the clock. Each fake writes what it is asked to do into one call log,
// which the tests compare whole.

const (
	coreSession = "11111111-1111-4111-8111-111111111111"
	coreText    = "go on"
)

// callLog is the ordered record of what the daemon asked of its edges.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf(format, args...))
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// faultyStore is the real database, refusing every write while refuse is
// set, as a full disk does.
type faultyStore struct {
	*inbox.DB
	log    *callLog
	mu     sync.Mutex
	refuse bool
	looked atomic.Int64 // positions stored as a first look's (Batch.Looked)
}

var errDiskFull = errors.New("database or disk is full (SQLITE_FULL)")

func (f *faultyStore) refusing(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = on
}

func (f *faultyStore) refused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refuse
}

// Commit logs the parts of a batch a person would notice: attempts begun,
// outcomes, entries; a refused commit logs that it was refused.
func (f *faultyStore) Commit(ctx context.Context, b inbox.Batch) error {
	if f.refused() {
		if notable(b) != nil {
			f.log.add("store refused")
		}
		return errDiskFull
	}
	if err := f.DB.Commit(ctx, b); err != nil {
		return err
	}
	f.looked.Add(int64(len(b.Looked)))
	for _, s := range notable(b) {
		f.log.add("store %s", s)
	}
	return nil
}

func notable(b inbox.Batch) []string {
	var out []string
	for _, a := range b.Attempts {
		out = append(out, fmt.Sprintf("sending #%d", a.Attempt))
	}
	for _, o := range b.Outcomes {
		out = append(out, strings.TrimSpace(o.Status+" "+o.Reason))
	}
	for _, e := range b.Entries {
		out = append(out, "entry: "+e.What)
	}
	return out
}

func (f *faultyStore) Typing(ctx context.Context, id int64, backend, target, place string) error {
	if f.refused() {
		return errDiskFull
	}
	f.log.add("typing into %s %s", backend, target)
	return f.DB.Typing(ctx, id, backend, target, place)
}

// terminal stands in for the agent's terminal: it records the place, types
// (logs) the text, and can be made to hang in the middle, as a delivery cut
// by a crash does; screen is what the place shows afterwards.
type terminal struct {
	log       *callLog
	mu        sync.Mutex
	hang      chan struct{} // set: Deliver blocks after pasting
	hangFirst bool          // with hang: blocks before recording the place
	screen    string
	delivered func() // called once the text is typed
	refuse    bool   // no terminal of the session is found
}

var tmuxPlace = inject.Where{Server: "/tmp/tmux-0/default", Pane: "%3"}

func (t *terminal) Deliver(ctx context.Context, target inject.Target, text string) (inject.Delivery, error) {
	del := inject.Delivery{Backend: "tmux", Where: tmuxPlace.String()}
	t.mu.Lock()
	hang, first, after, refuse := t.hang, t.hangFirst, t.delivered, t.refuse
	t.mu.Unlock()
	if refuse {
		t.log.add("refused")
		return inject.Delivery{}, advice.Why{Cause: advice.Unreachable}
	}
	if hang != nil && first {
		t.log.add("locate")
		<-ctx.Done()
		return del, ctx.Err()
	}
	if target.Typing != nil {
		if err := target.Typing(ctx, "tmux", tmuxPlace); err != nil {
			return del, err
		}
	}
	if hang != nil {
		t.log.add("paste %s", text)
		select {
		case <-hang:
		case <-ctx.Done():
		}
		return del, ctx.Err()
	}
	t.log.add("deliver %s", text)
	if after != nil {
		after()
	}
	return del, nil
}

func (t *terminal) Screen(_ context.Context, backend string, w inject.Where) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if backend != "tmux" || w != tmuxPlace || t.screen == "" {
		return "", inject.ErrNoScreen
	}
	return t.screen, nil
}

type notices struct{ log *callLog }

func (n notices) Send(m notify.Message) { n.log.add("notify %s", m.Title) }

// clock is the daemon's time, moved by the test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// core is one machine: a Claude root, a data folder, the edges; start runs
// a daemon on them, stop ends it as a crash would (nothing more is stored).
type core struct {
	t        testing.TB
	dir      string
	root     string
	log      *callLog
	store    *faultyStore
	terminal *terminal
	clock    *clock
	daemon   *Daemon
	stop     func()
	logs     *lockedWriter
	settled  <-chan struct{} // closed once the first scan is stored (OnSettled)
	level    slog.Level      // of the daemon's log: info unless a test asks
}

func newCore(t testing.TB) *core {
	t.Helper()
	dir := t.TempDir()
	c := &core{t: t, dir: dir, root: filepath.Join(dir, "claude"), log: &callLog{},
		clock: &clock{t: time.Now().UTC().Truncate(time.Second)}}
	c.terminal = &terminal{log: c.log}
	if err := os.MkdirAll(filepath.Join(c.root, "projects", "-p"), 0o700); err != nil {
		t.Fatal(err)
	}
	return c
}

// start runs a daemon on the core's files and database and waits until its
// first scan is stored.
func (c *core) start() {
	c.t.Helper()
	c.startRefusing(false)
	c.eventually("the first scan stored", func() bool { return c.status().Daemon.Ready })
}

// startRefusing runs a daemon whose store refuses writes from the start
// when refuse is set.
func (c *core) startRefusing(refuse bool) {
	c.t.Helper()
	db, err := inbox.Open(filepath.Join(c.dir, "nudge.db"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.store = &faultyStore{DB: db, log: c.log, refuse: refuse}
	c.logs = &lockedWriter{w: &bytes.Buffer{}}
	cfg := config.Config{DataDir: c.dir, Agents: map[string]config.Agent{"claude": {Enabled: true, Root: c.root}}}
	cfg.Watch.Rescan = time.Hour
	d, err := New(cfg, slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: c.level})))
	if err != nil {
		c.t.Fatal(err)
	}
	d.store, d.deliver, d.notify, d.now = c.store, c.terminal, notices{c.log}, c.clock.now
	d.settings = retry.DefaultSettings()
	d.settings.Message = coreText
	settled := make(chan struct{})
	d.OnSettled(func() { close(settled) })
	c.settled = settled
	ctx, cancel := context.WithCancel(context.Background())
	w, err := d.newWatcher(ctx, time.Time{})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := d.restore(ctx); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.serve(ctx, w) }()
	c.daemon = d
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				c.t.Errorf("daemon: %v", err)
			}
			d.lock.release()
			db.Close()
		})
	}
	c.t.Cleanup(c.stop)
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// status asks the running daemon for its picture, through its loop.
func (c *core) status() status.Status {
	c.t.Helper()
	got := make(chan status.Status, 1)
	c.daemon.calls <- func() { c.daemon.refreshView(); got <- c.daemon.Status() }
	return <-got
}

// advance moves the clock and lets the loop look at its timers.
func (c *core) advance(d time.Duration) {
	c.clock.add(d)
	done := make(chan struct{})
	c.daemon.calls <- func() { close(done) }
	<-done
}

func (c *core) eventually(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s; calls so far:\n\t%s\nlog:\n%s", what, strings.Join(c.log.all(), "\n\t"), c.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// want waits until the call log holds exactly want (and checks that no
// more comes for a moment).
func (c *core) want(want ...string) {
	c.t.Helper()
	c.eventually(fmt.Sprintf("%d calls", len(want)), func() bool { return len(c.log.all()) >= len(want) })
	time.Sleep(150 * time.Millisecond)
	if got := c.log.all(); !slices.Equal(got, want) {
		c.t.Fatalf("calls:\n\t%s\nwant:\n\t%s\nlog:\n%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"), c.logs)
	}
}

// transcript is the session's file.
func (c *core) transcript() string {
	return filepath.Join(c.root, "projects", "-p", coreSession+".jsonl")
}

// write appends Claude Code records to the transcript.
func (c *core) write(records ...map[string]any) {
	c.t.Helper()
	f, err := os.OpenFile(c.transcript(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	var buf []byte // one write: the watcher reads the records together
	for _, rec := range records {
		rec["sessionId"], rec["cwd"], rec["isSidechain"] = coreSession, "/p", false
		if _, ok := rec["timestamp"]; !ok {
			rec["timestamp"] = c.clock.now().Format("2006-01-02T15:04:05.000Z")
		}
		b, err := json.Marshal(rec)
		if err != nil {
			c.t.Fatal(err)
		}
		buf = append(append(buf, b...), '\n')
	}
	if _, err := f.Write(buf); err != nil {
		c.t.Fatal(err)
	}
}

// Claude Code records (docs/agents/claude.md §3).
func prompt(uuid, text string) map[string]any {
	return map[string]any{"type": "user", "uuid": uuid, "message": map[string]any{"role": "user", "content": text},
		"origin": map[string]any{"kind": "human"}, "promptSource": "typed"}
}

func apiError(uuid string, status int, text string) map[string]any {
	return map[string]any{"type": "assistant", "uuid": uuid, "isApiErrorMessage": true, "error": "server_error", "apiErrorStatus": status,
		"message": map[string]any{"model": "<synthetic>", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}}
}

func authError(uuid string) map[string]any {
	r := apiError(uuid, 401, "Invalid API key · Please run /login")
	r["error"] = "authentication_failed"
	return r
}

func endTurn(uuid string) map[string]any {
	return map[string]any{"type": "assistant", "uuid": uuid, "message": map[string]any{"id": "msg_" + uuid, "model": "claude-opus-5-5",
		"stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "Done."}}}}
}

func turnDuration(uuid string) map[string]any {
	return map[string]any{"type": "system", "subtype": "turn_duration", "uuid": uuid, "durationMs": 10}
}

const err500 = "API Error: 500 Internal server error"

// entries are the stored Inbox entries, oldest first.
func (c *core) entries() []inbox.EntryRow {
	c.t.Helper()
	es, err := c.store.Entries(context.Background(), false)
	if err != nil {
		c.t.Fatal(err)
	}
	slices.Reverse(es)
	return es
}

// events are the stored events of the session, by kind.
func (c *core) events() map[string]int {
	c.t.Helper()
	evs, _, _, err := c.store.Timeline(context.Background(), "claude", coreSession)
	if err != nil {
		c.t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range evs {
		n[e.Kind]++
	}
	return n
}
