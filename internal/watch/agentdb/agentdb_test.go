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

// The -wal beside a database in rollback mode is not read: SQLite reads
// none there.
func TestNoWALInRollbackMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE m (s TEXT); INSERT INTO m VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`PRAGMA journal_mode=DELETE; INSERT INTO m VALUES ('b')`); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := Count(t.Context(), path, `SELECT count(*) FROM m`); err != nil || n != 2 {
		t.Errorf("count = %d, %v; want 2, the main file's", n, err)
	}
}

// While a writer commits (its count of rows last), spills transactions not
// committed yet into the WAL, shrinks the database and checkpoints as fast
// as it can, starting the WAL over, every read that Changed does not drop
// is whole (no error, every row counted, no transaction seen undone): a
// read of its own, and a read that reads only the frames the reads before
// it did not (WAL).
func TestReadsUnderCheckpointsAreWholeOrDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(20)&_pragma=cache_size(2)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE m (s TEXT); CREATE TABLE c (n INTEGER, w INTEGER); INSERT INTO c VALUES (0, 0)`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		// c holds the count of m as each transaction leaves it, and how
		// many transactions wrote, updated last.
		const count = `; UPDATE c SET n = (SELECT count(*) FROM m), w = w + 1; COMMIT`
		for i := 0; ; i++ {
			select {
			case <-stop:
				written <- nil
				return
			default:
			}
			q := `BEGIN; INSERT INTO m VALUES (hex(randomblob(200)))` + count
			switch i % 50 {
			case 10:
				q = `BEGIN; INSERT INTO m SELECT hex(randomblob(1000)) FROM m LIMIT 200` + count
			case 20:
				q = `PRAGMA wal_checkpoint(RESTART)`
			case 30:
				q = `PRAGMA wal_checkpoint(TRUNCATE)`
			case 40:
				// The database shrinks: the commit names fewer pages.
				q = `BEGIN; DELETE FROM m WHERE rowid % 3 = 0` + count + `; VACUUM`
			}
			if _, err := w.Exec(q); err != nil {
				written <- err
				return
			}
		}
	}()
	var again WAL
	whole, most := [2]int{}, [2]int{}
	for i := range 600 {
		db, err := Open(path)
		if i%2 == 1 {
			db, err = again.Open(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		var n, last, writes int
		err = db.QueryRow(`SELECT count(*), (SELECT n FROM c), (SELECT w FROM c) FROM m`).Scan(&n, &last, &writes)
		switch {
		case db.Changed():
		case err != nil:
			t.Errorf("a read not dropped failed: %v", err)
		case n != last:
			t.Errorf("a read not dropped counted %d rows of %d", n, last)
		case writes < most[i%2]:
			t.Errorf("a read not dropped saw %d transactions after %d", writes, most[i%2])
		default:
			whole[i%2]++
			most[i%2] = writes
		}
		db.Close()
	}
	close(stop)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if whole[0] == 0 || whole[1] == 0 {
		t.Errorf("reads not dropped: %d of their own, %d again", whole[0], whole[1])
	}
	var want int
	if err := w.QueryRow(`SELECT count(*) FROM m`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(string) (*DB, error){Open, again.Open} {
		db, err := open(path)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM m`).Scan(&n); err != nil || n != want || db.Changed() {
			t.Errorf("at rest: %d rows, %v, changed %v; want %d", n, err, db.Changed(), want)
		}
		db.Close()
	}
}

// A read of a database whose WAL holds a thousand pages, after one row
// more was committed: on its own, and with the WAL the reads before it
// learned.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "agent.db")
	w, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE m (s TEXT); WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i < 1000) INSERT INTO m SELECT hex(randomblob(1800)) FROM r`); err != nil {
		b.Fatal(err)
	}
	for _, again := range []bool{false, true} {
		name := map[bool]string{false: "own", true: "again"}[again]
		b.Run(name, func(b *testing.B) {
			var x WAL
			for b.Loop() {
				if _, err := w.Exec(`INSERT INTO m VALUES ('a')`); err != nil {
					b.Fatal(err)
				}
				open := Open
				if again {
					open = x.Open
				}
				db, err := open(path)
				if err != nil {
					b.Fatal(err)
				}
				var last int
				if err := db.QueryRow(`SELECT max(rowid) FROM m`).Scan(&last); err != nil {
					b.Fatal(err)
				}
				db.Close()
			}
		})
	}
}
