package opencode

import (
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"nudge/internal/testenv"
)

// A database is read only once it is in WAL mode: before, a reader could
// make OpenCode's own switch to WAL fail with "database is locked".
func TestInWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if wal, err := InWAL(path); err != nil || wal {
		t.Fatalf("empty file: InWAL = %v, %v; want false, nil", wal, err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA journal_mode=DELETE; CREATE TABLE event (id TEXT)"); err != nil {
		t.Fatal(err)
	}
	if wal, err := InWAL(path); err != nil || wal {
		t.Fatalf("rollback-journal database: InWAL = %v, %v; want false, nil", wal, err)
	}
	if _, err := db.Exec("PRAGMA journal_mode=WAL"); err != nil {
		t.Fatal(err)
	}
	if wal, err := InWAL(path); err != nil || !wal {
		t.Fatalf("WAL database: InWAL = %v, %v; want true, nil", wal, err)
	}
	if _, err := InWAL(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("a missing file must be an error")
	}
	// A FIFO under the name is refused, not waited on for a writer.
	fifo := filepath.Join(t.TempDir(), "opencode.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Returns(t, "InWAL of a FIFO", func() error { _, err := InWAL(fifo); return err }); err == nil {
		t.Error("a FIFO must be an error")
	}
}
