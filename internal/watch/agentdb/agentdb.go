// Package agentdb asks an agent's own SQLite database one question,
// read-only and without holding a transaction: for a hook that must return
// at once (classify.Hook).
package agentdb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver
)

// timeout bounds one question.
const timeout = 2 * time.Second

// Open opens an agent's SQLite database at path read-only (it is never
// written to), waiting up to busy for the agent's own writes.
func Open(path string, busy time.Duration) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs),
		RawQuery: fmt.Sprintf("mode=ro&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busy.Milliseconds())}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	return db, nil
}

// Count runs query, which selects one number, with args on the database at
// path. A missing database is an error wrapping os.ErrNotExist; anything
// but a regular file (a FIFO, whose opening would wait for a writer) is
// refused.
func Count(ctx context.Context, path, query string, args ...any) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	db, err := Open(path, time.Second)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
