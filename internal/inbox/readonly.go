package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// OpenReadOnly opens the existing database at path for reading only, for a
// process that must never change it (the MCP server): nothing is created
// or migrated, and a write fails. A missing file is an error wrapping
// fs.ErrNotExist; a schema other than this program's is an error.
func OpenReadOnly(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("inbox: %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	name := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String() + "?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)"
	var pools [2]*sql.DB
	for i := range pools {
		if pools[i], err = sql.Open("sqlite", name); err != nil {
			return nil, fmt.Errorf("inbox: open %s for reading: %w", abs, err)
		}
	}
	db := &DB{path: abs, w: pools[0], r: pools[1], changed: make(chan struct{})}
	// Counting the schema's tables reads the first page, where a damaged
	// file is told apart from an old one.
	var version int
	if err := db.r.QueryRowContext(context.Background(), "SELECT (SELECT user_version FROM pragma_user_version), count(*) FROM sqlite_schema").Scan(&version, new(int)); err != nil {
		db.Close()
		return nil, fmt.Errorf("inbox: %s: read schema: %w", abs, damaged(abs, err))
	}
	if version != len(migrations) {
		db.Close()
		return nil, fmt.Errorf("inbox: %s has schema version %d, this program reads version %d (run the daemon of this version once)", abs, version, len(migrations))
	}
	return db, nil
}
