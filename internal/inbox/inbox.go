// Package inbox is nudge's SQLite database: Inbox entries, session state,
// the attempt ledger, the event and decision log, and tail offsets.
package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"modernc.org/sqlite" // also the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// pragmas apply to every pooled connection (docs/platform.md §5): WAL so readers
// and the writer do not block each other, NORMAL because a WAL commit then
// survives a daemon crash, busy_timeout for other processes (the CLI).
const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"

// readerCache is the page cache of each reading connection (SQLite's
// default is 2 MiB): they answer small look-ups all day
// (docs/performance.md).
const readerCache = "&_pragma=cache_size(-256)"

// ErrNotFound is returned for an entry or attempt id that does not exist.
var ErrNotFound = errors.New("not found")

// DB is the open database: one writer connection and a pool of readers.
// Several DBs (processes) may share one file.
type DB struct {
	path string
	w    *sql.DB // the single writer: BEGIN IMMEDIATE, one connection
	r    *sql.DB // readers: query_only, deferred transactions

	// stmts are the writer's statements every batch runs, prepared once on
	// its one connection (writeStatements).
	stmts map[string]*sql.Stmt

	mu      sync.Mutex
	changed chan struct{}
}

// Open opens (creating if needed) the database at path, user-only (folder
// 0700, file 0600), and brings its schema up to date.
func Open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("inbox: %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("inbox: create folder for %s: %w", abs, err)
	}
	// Create the file first, user-only: SQLite gives -wal and -shm the
	// main file's mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("inbox: create %s: %w", abs, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("inbox: restrict %s: %w", abs, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("inbox: create %s: %w", abs, err)
	}

	name := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	w, err := sql.Open("sqlite", name+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("inbox: open %s: %w", abs, err)
	}
	w.SetMaxOpenConns(1)
	if err := migrateWhenFree(context.Background(), w); err != nil {
		w.Close()
		return nil, fmt.Errorf("inbox: %s: %w", abs, damaged(abs, err))
	}
	stmts := make(map[string]*sql.Stmt, len(writeStatements))
	for _, q := range writeStatements {
		s, err := w.Prepare(q)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("inbox: %s: %w", abs, damaged(abs, fmt.Errorf("prepare the statements a batch runs: %w", err)))
		}
		stmts[q] = s
	}
	r, err := sql.Open("sqlite", name+"?"+pragmas+readerCache+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("inbox: open %s for reading: %w", abs, err)
	}
	r.SetMaxOpenConns(4)
	return &DB{path: abs, w: w, r: r, stmts: stmts, changed: make(chan struct{})}, nil
}

// writeTx is a write transaction. The statements prepared when the
// database was opened are run through it without being prepared again;
// any other query is prepared for the transaction alone.
type writeTx struct {
	*sql.Tx
	stmts map[string]*sql.Stmt
}

// prepare is query's statement in tx.
func (tx writeTx) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := tx.stmts[query]; ok {
		return tx.StmtContext(ctx, s), nil
	}
	return tx.PrepareContext(ctx, query)
}

// migrate runs the schema steps up to step `upTo` that the database has
// not run yet, each in its own transaction with its version bump.
func migrate(ctx context.Context, w *sql.DB, upTo int) error {
	for {
		done, err := migrateOne(ctx, w, upTo)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne runs the next pending step; done reports that none is left.
func migrateOne(ctx context.Context, w *sql.DB, upTo int) (done bool, err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, fmt.Errorf("migrate: read schema version: %w", err)
	}
	if version > len(migrations) {
		return false, fmt.Errorf("migrate: schema version %d is newer than this program's (%d): a newer nudge wrote it; "+
			"run that version again (nudge --version says which this is), or move the database aside to start with an empty Inbox",
			version, len(migrations))
	}
	if version >= upTo {
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, migrations[version]); err != nil {
		return false, fmt.Errorf("migrate to schema version %d: %w", version+1, err)
	}
	if move := moveData[version+1]; move != nil {
		if err := move(ctx, writeTx{Tx: tx}); err != nil {
			return false, fmt.Errorf("migrate to schema version %d: %w", version+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
		return false, fmt.Errorf("migrate: set schema version %d: %w", version+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate to schema version %d: commit: %w", version+1, err)
	}
	return false, nil
}

// damaged adds to err, met opening the database at abs, what the person
// can do when SQLite finds the file damaged or not a database at all:
// move it aside with its -wal and -shm, so that the next start makes a
// new one.
func damaged(abs string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w; %s", err, damagedAdvice(abs))
	}
	return err
}

// damagedAdvice tells how to start again from a damaged database at abs.
func damagedAdvice(abs string) string {
	aside := filepath.Join(filepath.Dir(abs), "damaged")
	return fmt.Sprintf("the database is damaged: move it aside (mkdir -p %q && mv %q* %q) and start nudge again: "+
		"it makes a new one, with an empty Inbox, and does not act on old history", aside, abs, aside)
}

// busyRetries bounds how often Open waits out another process that holds
// the database while it starts (the daemon and a CLI command creating the
// file at the same moment: switching a new file to WAL takes an exclusive
// lock that busy_timeout does not always wait for).
const busyRetries = 25

// migrateWhenFree migrates, retrying while another process holds the lock.
func migrateWhenFree(ctx context.Context, w *sql.DB) error {
	for i := 0; ; i++ {
		err := migrate(ctx, w, len(migrations))
		var se *sqlite.Error
		if err == nil || i == busyRetries || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Close closes both connection pools.
func (db *DB) Close() error {
	var errs []error
	for _, s := range db.stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(append(errs, db.r.Close(), db.w.Close())...)
}

// Changed returns a channel that is closed at the next change made through
// this DB (a Commit or an Inbox entry change); call it again afterwards for
// the change after that. Changes by another process are not signalled.
func (db *DB) Changed() <-chan struct{} {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.changed
}

// announce wakes everyone waiting on Changed.
func (db *DB) announce() {
	db.mu.Lock()
	defer db.mu.Unlock()
	close(db.changed)
	db.changed = make(chan struct{})
}

// write runs fn in one immediate transaction on the writer.
func (db *DB) write(ctx context.Context, fn func(writeTx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(writeTx{Tx: tx, stmts: db.stmts}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Meta returns the value stored under key, and whether there is one.
func (db *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := db.r.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("inbox: meta %q: %w", key, err)
	}
	return v, true, nil
}

// SetMeta stores value under key.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := db.w.ExecContext(ctx,
		"INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("inbox: set meta %q: %w", key, err)
	}
	return nil
}

// ms stores t as unix milliseconds; the zero time is NULL.
func ms(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// fromMS reads a time stored by ms, in UTC.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// Shrink gives back the memory the writing connection's page cache holds,
// after a step that touched many pages (a first look's positions).
func (db *DB) Shrink(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, "PRAGMA shrink_memory"); err != nil {
		return fmt.Errorf("inbox: shrink memory: %w", err)
	}
	return nil
}
