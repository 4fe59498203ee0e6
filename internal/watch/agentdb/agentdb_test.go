package agentdb

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
