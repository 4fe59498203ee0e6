package agentdb

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// A count is read from a real database, read-only; a missing database is
// os.ErrNotExist, and a question the database cannot answer an error that
// names it.
func TestCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE m (s TEXT); INSERT INTO m VALUES ('a'), ('a'), ('b')`); err != nil {
		t.Fatal(err)
	}
	if n, err := Count(t.Context(), path, `SELECT count(*) FROM m WHERE s = ?`, "a"); err != nil || n != 2 {
		t.Errorf("count = %d, %v; want 2", n, err)
	}
	if _, err := Count(t.Context(), path, `DELETE FROM m`); err == nil {
		t.Error("a write was not refused")
	}
	if n, _ := Count(t.Context(), path, `SELECT count(*) FROM m`); n != 3 {
		t.Errorf("%d rows after a refused write, want 3", n)
	}
	if _, err := Count(t.Context(), path, `SELECT count(*) FROM none`); err == nil || !strings.Contains(err.Error(), "agent.db") {
		t.Errorf("unknown table: %v", err)
	}
	if _, err := Count(t.Context(), filepath.Join(t.TempDir(), "none.db"), `SELECT 1`); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing database: %v", err)
	}
}

// Rows a live writer keeps in its WAL are read; a checkpoint of the
// writer's after the open is told by Changed; a FIFO is refused at once.
func TestWALIsReadAndCheckpointsAreSeen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE m (s TEXT); INSERT INTO m VALUES ('a'), ('b')`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM m`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows in the WAL: %d, %v", n, err)
	}
	if db.Changed() {
		t.Error("changed with no checkpoint")
	}
	if _, err := w.Exec(`INSERT INTO m VALUES ('c'); PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO m VALUES ('d')`); err != nil {
		t.Fatal(err)
	}
	if !db.Changed() {
		t.Error("a checkpoint that started the WAL over was not seen")
	}

	fifo := filepath.Join(dir, "fifo.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err = testenv.Returns(t, "a FIFO's open", func() error {
		_, err := Count(t.Context(), fifo, `SELECT 1`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("FIFO: %v", err)
	}
}

// While a writer inserts and checkpoints as fast as it can, every read
// that Changed does not drop is whole: no error, every row counted.
func TestReadsUnderCheckpointsAreWholeOrDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(20)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE m (s TEXT)`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				written <- nil
				return
			default:
			}
			if _, err := w.Exec(`INSERT INTO m VALUES (hex(randomblob(200)))`); err != nil {
				written <- err
				return
			}
		}
	}()
	whole := 0
	for range 300 {
		db, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var n, last int
		err = db.QueryRow(`SELECT count(*), coalesce(max(rowid), 0) FROM m`).Scan(&n, &last)
		switch {
		case db.Changed():
		case err != nil:
			t.Errorf("a read not dropped failed: %v", err)
		case n != last:
			t.Errorf("a read not dropped counted %d rows of %d", n, last)
		default:
			whole++
		}
		db.Close()
	}
	close(stop)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if whole == 0 {
		t.Error("every read was dropped")
	}
}
