package inbox

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var ctx = context.Background()

func open(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// at is a fixed time with millisecond precision, the precision stored.
func at(sec int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, sec, 123_000_000, time.UTC)
}

func TestOpenIsUserOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "nudge")
	path := filepath.Join(dir, "nudge.db")
	db := open(t, path)
	if err := db.Commit(ctx, Batch{Decisions: []DecisionRow{{Agent: "claude", Session: "s1", Time: at(0), What: "x"}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {path, 0o600}, {path + "-wal", 0o600}, {path + "-shm", 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	var mode string
	for _, pool := range []*sql.DB{db.w, db.r} {
		if err := pool.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
	}
}

func TestOpenTightensAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	open(t, path)
	if fi, err := os.Stat(path); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Application Support?#%20", "nudge.db")
	db := open(t, path)
	if err := db.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
}

func schemaVersion(t *testing.T, db *DB) int {
	t.Helper()
	var v int
	if err := db.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenTwiceKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(ctx, "first_start", "2026-03-01"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path)
	if v := schemaVersion(t, db); v != len(migrations) {
		t.Fatalf("schema version %d, want %d", v, len(migrations))
	}
	if v, ok, err := db.Meta(ctx, "first_start"); err != nil || !ok || v != "2026-03-01" {
		t.Fatalf("Meta = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := db.Meta(ctx, "never_set"); err != nil || ok {
		t.Fatalf("Meta(never_set) = %v, %v; want absent", ok, err)
	}
}

// openAt opens a new database at path with the schema of version.
func openAt(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	old, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, old, version); err != nil {
		t.Fatal(err)
	}
	return old
}

func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	old := openAt(t, path, 1)
	if _, err := old.Exec(`INSERT INTO entries (time, agent, project, session, what, error_text, class, code, attempts)
		VALUES (1, 'codex', '/p', 's', 'gave up', 'HTTP 500', 'provider_error', '500', 3)`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec("SELECT 1 FROM attempts"); err == nil {
		t.Fatal("version 1 already has the attempts table: the test migrates nothing")
	}
	old.Close()

	db := open(t, path)
	if v := schemaVersion(t, db); v != len(migrations) {
		t.Fatalf("schema version %d, want %d", v, len(migrations))
	}
	entries, err := db.Entries(ctx, false)
	if err != nil || len(entries) != 1 || entries[0].ErrorText != "HTTP 500" {
		t.Fatalf("entries after migration = %+v, %v", entries, err)
	}
	if id := begin(t, db, AttemptRow{Agent: "codex", Session: "s", Episode: "e", Attempt: 1}); id == 0 {
		t.Fatal("attempt ledger after migration: the attempt was not begun")
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a database from a newer version")
	}
	if !strings.Contains(err.Error(), "run that version again") || !strings.Contains(err.Error(), "move the database aside") {
		t.Errorf("the refusal says nothing to do: %v", err)
	}
}

func fullBatch() Batch {
	return Batch{
		Positions: []Position{{Path: "/h/.claude/projects/p/s1.jsonl", Dev: 2049, Inode: 1 << 63, Fingerprint: "ab12", Offset: 4096}},
		Events: []EventRow{
			{Agent: "claude", Session: "s1", Project: "/p", Time: at(2), DetectedAt: at(3), Kind: "turn_failed",
				Class: "provider_error", Code: "529", Message: "Overloaded", Detail: `{"line":7}`},
			{Agent: "claude", Session: "s1", Project: "/p", Time: at(1), DetectedAt: at(3), Kind: "turn_started"},
		},
		Sessions: []SessionRow{{Agent: "claude", Session: "s1", Project: "/p", Path: "/h/.claude/projects/p/s1.jsonl",
			State: "retrying", Note: "attempt 1 of 3", Until: at(12), UpdatedAt: at(3), Machine: []byte(`{"attempt":1}`)}},
		Entries:   []EntryRow{{Time: at(3), Agent: "claude", Project: "/p", Session: "s1", What: "gave up", ErrorText: "Overloaded", Class: "provider_error", Code: "529", Attempts: 3}},
		Decisions: []DecisionRow{{Agent: "claude", Session: "s1", Time: at(3), What: "retry in 10s"}},
		Attempts:  []AttemptRow{{Agent: "claude", Session: "s1", Episode: "ep1", Attempt: 1, Text: "continue", Started: at(3)}},
	}
}

func TestCommitRoundTrip(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	b := fullBatch()
	changed := db.Changed()
	if err := db.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("Changed not signalled by Commit")
	}

	if pos := positionsOf(t, db); !reflect.DeepEqual(pos, map[string]Position{b.Positions[0].Path: b.Positions[0]}) {
		t.Errorf("Positions = %+v", pos)
	}
	sessions, err := db.Sessions(ctx)
	if err != nil || !reflect.DeepEqual(sessions, b.Sessions) {
		t.Errorf("Sessions = %+v, %v\nwant %+v", sessions, err, b.Sessions)
	}
	s, ok, err := db.Session(ctx, "claude", "s1")
	if err != nil || !ok || !reflect.DeepEqual(s, b.Sessions[0]) {
		t.Errorf("Session = %+v, %v, %v", s, ok, err)
	}
	if _, ok, err := db.Session(ctx, "codex", "s1"); err != nil || ok {
		t.Errorf("Session(codex, s1) = %v, %v; want absent", ok, err)
	}
	events, decisions, attempts, err := db.Timeline(ctx, "", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []EventRow{b.Events[1], b.Events[0]}; !reflect.DeepEqual(events, want) {
		t.Errorf("Timeline events = %+v\nwant (in time order) %+v", events, want)
	}
	if !reflect.DeepEqual(decisions, b.Decisions) {
		t.Errorf("Timeline decisions = %+v", decisions)
	}
	want := b.Attempts[0]
	want.Status = AttemptSending
	if want.ID == 0 || len(attempts) != 1 || !reflect.DeepEqual(attempts[0], want) {
		t.Errorf("Timeline attempts = %+v, want %+v", attempts, want)
	}

	// A later batch replaces the session row and the position.
	b2 := Batch{
		Positions: []Position{{Path: b.Positions[0].Path, Dev: 2049, Inode: 1 << 63, Fingerprint: "ab12", Offset: 5000}},
		Sessions:  []SessionRow{{Agent: "claude", Session: "s1", State: "finished", UpdatedAt: at(30)}},
	}
	if err := db.Commit(ctx, b2); err != nil {
		t.Fatal(err)
	}
	if pos := positionsOf(t, db); pos[b.Positions[0].Path].Offset != 5000 {
		t.Errorf("offset after update = %d, want 5000", pos[b.Positions[0].Path].Offset)
	}
	if s, _, _ := db.Session(ctx, "claude", "s1"); !reflect.DeepEqual(s, b2.Sessions[0]) {
		t.Errorf("session after update = %+v, want %+v", s, b2.Sessions[0])
	}
}

// assertEmpty fails t unless nothing of a batch was stored.
func assertEmpty(t *testing.T, db *DB) {
	t.Helper()
	for _, table := range []string{"positions", "events", "sessions", "entries", "decisions", "attempts"} {
		var n int
		if err := db.r.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s has %d rows after a failed Commit; want none", table, n)
		}
	}
}

func TestCommitIsAllOrNothing(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))

	// The decision comes last and is invalid (no session): everything
	// before it in the batch must be rolled back.
	b := fullBatch()
	b.Decisions = append(b.Decisions, DecisionRow{Agent: "claude", What: "orphan"})
	if err := db.Commit(ctx, b); err == nil {
		t.Fatal("Commit accepted a decision without a session")
	}
	assertEmpty(t, db)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Commit(cancelled, fullBatch()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit with a cancelled context = %v", err)
	}
	assertEmpty(t, db)

	// The writer is usable afterwards.
	if err := db.Commit(ctx, fullBatch()); err != nil {
		t.Fatal(err)
	}
}

func TestEntries(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	err := db.Commit(ctx, Batch{Entries: []EntryRow{
		{Time: at(1), Agent: "codex", Session: "a", What: "first"},
		{Time: at(3), Agent: "kimi", Session: "c", What: "third"},
		{Time: at(2), Agent: "claude", Session: "b", What: "second", Read: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	what := func(unread bool) []string {
		t.Helper()
		entries, err := db.Entries(ctx, unread)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.What)
		}
		return out
	}
	if got := what(false); !reflect.DeepEqual(got, []string{"third", "second", "first"}) {
		t.Errorf("Entries = %v, want newest first", got)
	}
	if got := what(true); !reflect.DeepEqual(got, []string{"third", "first"}) {
		t.Errorf("unread Entries = %v", got)
	}

	entries, _ := db.Entries(ctx, true)
	changed := db.Changed()
	if err := db.MarkRead(ctx, entries[0].ID); err != nil {
		t.Fatal(err)
	}
	<-changed // closed by MarkRead, or the test hangs
	if got := what(true); !reflect.DeepEqual(got, []string{"first"}) {
		t.Errorf("unread after MarkRead = %v", got)
	}
	if n, err := db.Unread(ctx); err != nil || n != 1 {
		t.Errorf("Unread = %d, %v; want 1", n, err)
	}
	if err := db.MarkRead(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkRead(999) = %v, want ErrNotFound", err)
	}
	if err := db.MarkAllRead(ctx); err != nil {
		t.Fatal(err)
	}
	if got := what(true); len(got) != 0 {
		t.Errorf("unread after MarkAllRead = %v", got)
	}
	if n, err := db.Unread(ctx); err != nil || n != 0 {
		t.Errorf("Unread after MarkAllRead = %d, %v; want 0", n, err)
	}
	if err := db.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got := what(false); len(got) != 0 {
		t.Errorf("entries after Clear = %v", got)
	}
}

// begin stores a as "sending" in a batch, as the daemon does, and returns
// its id: 0 when the attempt was begun before.
func begin(t *testing.T, db *DB, a AttemptRow) int64 {
	t.Helper()
	b := Batch{Attempts: []AttemptRow{a}}
	if err := db.Commit(ctx, b); err != nil {
		t.Fatalf("begin attempt: %v", err)
	}
	return b.Attempts[0].ID
}

func TestAttemptLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := AttemptRow{Agent: "claude", Session: "s1", Episode: "ep1", Attempt: 1, Text: "continue", Started: at(10)}
	id1 := begin(t, db, a)
	if id1 == 0 {
		t.Fatal("the first attempt was not begun")
	}
	if id := begin(t, db, a); id != 0 {
		t.Fatalf("the same attempt was begun twice (id %d)", id)
	}
	if err := db.Typing(ctx, id1, "tmux", "%3", `{"pane":"%3"}`); err != nil {
		t.Fatal(err)
	}
	finish := func(o Outcome) error { return db.Commit(ctx, Batch{Outcomes: []Outcome{o}}) }
	if err := finish(Outcome{ID: id1, Status: AttemptSent, Backend: "tmux", Target: "%3"}); err != nil {
		t.Fatal(err)
	}
	// Finishing again, or an unknown attempt, changes nothing: a batch
	// retried after a failed commit must not fail on its own outcome.
	if err := finish(Outcome{ID: id1, Status: AttemptFailed, Backend: "tmux", Target: "%3", Reason: "again"}); err != nil {
		t.Fatal(err)
	}
	if err := finish(Outcome{ID: 999, Status: AttemptSent}); err != nil {
		t.Fatal(err)
	}
	if err := finish(Outcome{ID: id1, Status: AttemptSending}); err == nil {
		t.Error("an outcome with status sending was accepted")
	}
	if err := db.Typing(ctx, id1, "kitty", "w1", ""); err != nil {
		t.Fatal(err) // typing after the outcome leaves the row as it is
	}
	// Same attempt number in a new episode is a new attempt; so is the
	// same episode in another session.
	a2 := AttemptRow{Agent: "claude", Session: "s1", Episode: "ep2", Attempt: 1, Text: "continue", Started: at(20)}
	if begin(t, db, a2) == 0 {
		t.Fatal("attempt 1 of a new episode was not begun")
	}
	if begin(t, db, AttemptRow{Agent: "claude", Session: "s2", Episode: "ep1", Attempt: 1}) == 0 {
		t.Fatal("the same episode in another session was not begun")
	}
	db.Close() // a crash after typing, before recording the outcome

	db = open(t, path)
	if id := begin(t, db, a2); id != 0 {
		t.Fatalf("an attempt begun before the restart was begun again (id %d)", id)
	}
	unfinished, err := db.Unfinished(ctx)
	if err != nil || len(unfinished) != 2 || unfinished[0].Episode != "ep2" || unfinished[0].Status != AttemptSending || unfinished[1].Session != "s2" {
		t.Fatalf("Unfinished = %+v, %v", unfinished, err)
	}
	attempts, err := db.Attempts(ctx, "claude", "s1")
	if err != nil || len(attempts) != 2 {
		t.Fatalf("Attempts = %+v, %v", attempts, err)
	}
	got := attempts[0]
	if got.ID != id1 || got.Status != AttemptSent || got.Backend != "tmux" || got.Target != "%3" || got.Reason != "" ||
		got.Text != "continue" || !got.Started.Equal(at(10)) || got.Finished.IsZero() || got.Typing.IsZero() || got.Place != `{"pane":"%3"}` {
		t.Errorf("first attempt = %+v", got)
	}
	if attempts[1].Typing.IsZero() != true || attempts[1].Place != "" {
		t.Errorf("an attempt never typed shows typing %v at %q", attempts[1].Typing, attempts[1].Place)
	}
	if _, _, tl, err := db.Timeline(ctx, "claude", "s1"); err != nil || !reflect.DeepEqual(tl, attempts) {
		t.Errorf("Timeline attempts = %+v, %v", tl, err)
	}
}

func TestReaderSeesSnapshotWhileWriterCommits(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	if err := db.Commit(ctx, Batch{Entries: []EntryRow{{Time: at(1), What: "before"}}}); err != nil {
		t.Fatal(err)
	}
	// A reader holds a snapshot; under a rollback journal the commit below
	// would wait for it and fail with SQLITE_BUSY after busy_timeout.
	rtx, err := db.r.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rtx.Rollback()
	count := func(q interface {
		QueryRow(string, ...any) *sql.Row
	}) int {
		var n int
		if err := q.QueryRow("SELECT count(*) FROM entries").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(rtx); n != 1 {
		t.Fatalf("reader sees %d entries, want 1", n)
	}
	if err := db.Commit(ctx, Batch{Entries: []EntryRow{{Time: at(2), What: "after"}}}); err != nil {
		t.Fatalf("Commit while a reader is open: %v", err)
	}
	if n := count(rtx); n != 1 {
		t.Errorf("open reader sees %d entries, want its snapshot's 1", n)
	}
	if n := count(db.r); n != 2 {
		t.Errorf("new reader sees %d entries, want 2", n)
	}
	if _, err := db.r.Exec("DELETE FROM entries"); err == nil {
		t.Error("the read pool accepted a write")
	}
}

// TestTwoProcesses: the CLI opens its own DB on the daemon's file and marks
// entries read while the daemon keeps committing; busy_timeout lets both
// through.
func TestTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	daemon := open(t, path)
	cli := open(t, path)
	const n = 200
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan error, 2*n)
	go func() {
		defer wg.Done()
		for i := range n {
			errs <- daemon.Commit(ctx, Batch{
				Positions: []Position{{Path: "/f", Offset: int64(i)}},
				Entries:   []EntryRow{{Time: at(i % 60), Agent: "codex", Session: "s", What: fmt.Sprint(i)}},
			})
		}
	}()
	go func() {
		defer wg.Done()
		for range n {
			errs <- cli.MarkAllRead(ctx)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := cli.MarkAllRead(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := daemon.Entries(ctx, false)
	if err != nil || len(all) != n {
		t.Fatalf("daemon sees %d entries, %v; want %d", len(all), err, n)
	}
	if unread, _ := daemon.Entries(ctx, true); len(unread) != 0 {
		t.Errorf("daemon sees %d unread after the CLI marked all read", len(unread))
	}
}

func TestMigrateFromVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	old := openAt(t, path, 2)
	for _, q := range []string{
		`INSERT INTO positions (path, dev, inode, fingerprint, offset) VALUES ('/f', 1, 2, '3:ab', 40)`,
		`INSERT INTO events (agent, session, project, kind, class, code, message, detail) VALUES ('claude', 's', '', 'turn_done', '', '', '', '')`,
		`INSERT INTO attempts (agent, session, episode, attempt, text, status, backend, target, reason) VALUES ('claude', 's', 'e', 1, 'go on', 'sending', '', '', '')`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db := open(t, path)
	if pos := positionsOf(t, db); pos["/f"] != (Position{Path: "/f", Dev: 1, Inode: 2, Fingerprint: "3:ab", Offset: 40}) {
		t.Fatalf("positions after migration = %+v", pos)
	}
	unfinished, err := db.Unfinished(ctx)
	if err != nil || len(unfinished) != 1 || !unfinished[0].Typing.IsZero() || unfinished[0].Place != "" {
		t.Fatalf("unfinished after migration = %+v, %v", unfinished, err)
	}
	events, _, _, err := db.Timeline(ctx, "claude", "s")
	if err != nil || len(events) != 1 {
		t.Fatalf("events after migration = %+v, %v", events, err)
	}
}

// TestEventsAtMostOnce: an event whose identity is stored is never stored
// again, in the same batch or a later one; events without one always are.
func TestEventsAtMostOnce(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	ev := func(ident string, kind string) EventRow {
		e := EventRow{Agent: "claude", Session: "s", Kind: kind, DetectedAt: at(1)}
		if ident != "" {
			e.Ident = []byte(ident)
		}
		return e
	}
	if err := db.Commit(ctx, Batch{Events: []EventRow{ev("a", "turn_failed"), ev("a", "turn_failed"), ev("", "agent_idle"), ev("", "agent_idle")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(ctx, Batch{Events: []EventRow{ev("a", "turn_failed"), ev("b", "turn_done")}}); err != nil {
		t.Fatal(err)
	}
	events, _, _, err := db.Timeline(ctx, "claude", "s")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	slices.Sort(kinds)
	if want := []string{"agent_idle", "agent_idle", "turn_done", "turn_failed"}; !slices.Equal(kinds, want) {
		t.Errorf("stored events %v, want %v", kinds, want)
	}
	// Known answers for more identities than one query holds.
	ask := [][]byte{[]byte("a"), []byte("zz")}
	for i := range 2 * knownChunk {
		ask = append(ask, fmt.Appendf(nil, "n%d", i))
	}
	ask = append(ask, []byte("b"))
	known, err := db.Known(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != 2 || !known["a"] || !known["b"] {
		t.Errorf("Known = %v, want a and b", known)
	}
}

func TestMetaCommitsWithTheBatch(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	b := Batch{Positions: []Position{{Path: "/f", Offset: 7, Mark: "1:00"}}, Meta: []MetaRow{{Key: "k", Value: "v1"}}}
	if err := db.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.Meta[0].Value = "v2"
	b.Decisions = []DecisionRow{{Agent: "claude", What: "no session: refused"}}
	if err := db.Commit(ctx, b); err == nil {
		t.Fatal("a bad batch was stored")
	}
	if v, _, _ := db.Meta(ctx, "k"); v != "v1" {
		t.Errorf("meta after a failed commit = %q, want v1", v)
	}
	if pos := positionsOf(t, db); pos["/f"].Mark != "1:00" {
		t.Errorf("position mark = %q", pos["/f"].Mark)
	}
	if err := db.Commit(ctx, Batch{Forget: []string{"/f", "/never"}}); err != nil {
		t.Fatal(err)
	}
	if pos := positionsOf(t, db); len(pos) != 0 {
		t.Errorf("positions after Forget: %+v", pos)
	}
}

// A damaged database, or a file that is no database, is refused with what
// to do; doing it, as written, lets the next Open start afresh.
func TestDamagedDatabaseSaysWhatToDo(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to follow the advice with")
	}
	damage := map[string]func(t *testing.T, path string){
		"damaged pages": func(t *testing.T, path string) {
			db, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(ctx, fullBatch()); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			// The first page past its header: the schema's table.
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bytes.Repeat([]byte("garbage"), 2000), 100); err != nil {
				t.Fatal(err)
			}
		},
		"no database": func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 100), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	advice := regexp.MustCompile(`move it aside \((.+)\) and start nudge again`)
	for name, spoil := range damage {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nudge.db")
			spoil(t, path)
			_, errRO := OpenReadOnly(path)
			db, err := Open(path)
			if err == nil {
				db.Close()
				t.Fatal("Open accepted a damaged database")
			}
			for _, err := range []error{err, errRO} {
				if err == nil || !advice.MatchString(err.Error()) {
					t.Fatalf("error %v does not say what to do", err)
				}
			}
			if out, err := exec.Command(sh, "-c", advice.FindStringSubmatch(err.Error())[1]).CombinedOutput(); err != nil {
				t.Fatalf("the advice fails: %v\n%s", err, out)
			}
			db = open(t, path)
			if entries, err := db.Entries(ctx, false); err != nil || len(entries) != 0 {
				t.Fatalf("after moving the damaged one aside: entries %v, %v; want a new, empty database", entries, err)
			}
		})
	}
}

// TestOpenRefusesAMissingTable: a database missing a table a batch writes
// to (dropped by hand) is refused when it is opened, saying why, rather
// than at its first batch.
func TestOpenRefusesAMissingTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nudge.db")
	db := open(t, path)
	if _, err := db.w.ExecContext(ctx, "DROP TABLE positions"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "prepare the statements a batch runs") || !strings.Contains(err.Error(), "positions") {
		t.Fatalf("open without the positions table: %v", err)
	}
}

// TestHeldAttemptBegunAgain: an attempt that failed before any key was
// typed (held: the person was using the prompt) is begun again under its
// own number; one that typed, or was sent, never is.
func TestHeldAttemptBegunAgain(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "nudge.db"))
	finish := func(o Outcome) {
		t.Helper()
		if err := db.Commit(ctx, Batch{Outcomes: []Outcome{o}}); err != nil {
			t.Fatal(err)
		}
	}
	held := AttemptRow{Agent: "claude", Session: "s1", Episode: "ep1", Attempt: 1, Text: "continue", Started: at(10)}
	id := begin(t, db, held)
	finish(Outcome{ID: id, Status: AttemptFailed, Backend: "tmux", Target: "%3", Reason: "waiting: you have unsent text in the prompt"})
	held.Started = at(20)
	again := begin(t, db, held)
	if again != id {
		t.Fatalf("a held attempt was begun again as %d, want its own row %d", again, id)
	}
	if err := db.Typing(ctx, again, "tmux", "%3", `{"pane":"%3"}`); err != nil {
		t.Fatal(err)
	}
	finish(Outcome{ID: again, Status: AttemptFailed, Backend: "tmux", Target: "%3", Reason: "typing failed"})
	if id := begin(t, db, held); id != 0 {
		t.Fatalf("an attempt that began typing was begun again (id %d)", id)
	}
	sent := AttemptRow{Agent: "claude", Session: "s1", Episode: "ep1", Attempt: 2, Text: "continue", Started: at(30)}
	finish(Outcome{ID: begin(t, db, sent), Status: AttemptSent})
	if id := begin(t, db, sent); id != 0 {
		t.Fatalf("a sent attempt was begun again (id %d)", id)
	}
	attempts, err := db.Attempts(ctx, "claude", "s1")
	if err != nil || len(attempts) != 2 || attempts[0].Reason != "typing failed" || !attempts[0].Started.Equal(at(20)) {
		t.Fatalf("Attempts = %+v, %v", attempts, err)
	}
}
