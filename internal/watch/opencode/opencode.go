// Package opencode reads what OpenCode keeps outside of plain files: the
// durable event log in its SQLite database, and the HTTP server of a
// running process: where it listens, its password, the database it writes
// (docs/agents/opencode.md §2.1, §2.4). It never writes to either.
package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"nudge/internal/watch/agentdb"
	"nudge/internal/watch/disk"
)

// Open opens the database at path for reading, with the rows of its WAL
// as they were when it opened (agentdb; docs/agents/opencode.md §2.1):
// reading of the WAL what wal, which the reads before kept, has not read.
func Open(wal *agentdb.WAL, path string) (*agentdb.DB, error) {
	db, err := wal.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opencode %w", err)
	}
	return db, nil
}

// InWAL tells whether the database file at path is in WAL mode
// (agentdb.InWAL). A new OpenCode database starts in rollback mode and
// switches to WAL while OpenCode starts: that switch needs an exclusive
// lock, and a reader holding a shared lock at that moment makes OpenCode
// fail with "database is locked". So nothing reads a database until it is
// in WAL mode, where readers never block OpenCode.
func InWAL(path string) (bool, error) {
	f, _, err := disk.Open(path)
	if err != nil {
		return false, fmt.Errorf("opencode database %s: %w", path, err)
	}
	defer f.Close()
	return agentdb.InWAL(f), nil
}

// Row is one row of the durable `event` table as a line: the `sync` payload
// OpenCode itself sends on /global/event for a durable event (§2.4),
// {"type":"sync","syncEvent":{"id","type","seq","aggregateID","data"}}.
type Row struct {
	RowID int64
	// Session is the row's aggregate_id.
	Session string
	Line    []byte
}

type syncPayload struct {
	Type      string    `json:"type"`
	SyncEvent syncEvent `json:"syncEvent"`
}

type syncEvent struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Seq         int64           `json:"seq"`
	AggregateID string          `json:"aggregateID"`
	Data        json.RawMessage `json:"data"`
}

// Events returns up to limit rows of the event log after rowid after, in
// rowid order (the order they were written). One short read: no statement
// stays open after it returns.
func Events(ctx context.Context, db *sql.DB, after int64, limit int) ([]Row, error) {
	rows, err := db.QueryContext(ctx,
		"SELECT rowid, id, aggregate_id, seq, type, data FROM event WHERE rowid > ? ORDER BY rowid LIMIT ?", after, limit)
	if err != nil {
		return nil, fmt.Errorf("read opencode events: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var (
			r    Row
			ev   syncEvent
			data []byte
		)
		if err := rows.Scan(&r.RowID, &ev.ID, &ev.AggregateID, &ev.Seq, &ev.Type, &data); err != nil {
			return out, fmt.Errorf("read opencode event: %w", err)
		}
		if !json.Valid(data) {
			data = []byte("null")
		}
		ev.Data = data
		line, err := json.Marshal(syncPayload{Type: "sync", SyncEvent: ev})
		if err != nil {
			return out, fmt.Errorf("encode opencode event %s: %w", ev.ID, err)
		}
		r.Session, r.Line = ev.AggregateID, line
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read opencode events: %w", err)
	}
	return out, nil
}

// Last is the rowid of the newest event row, 0 when there is none.
func Last(ctx context.Context, db *sql.DB) (int64, error) {
	var last int64
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(rowid), 0) FROM event").Scan(&last); err != nil {
		return 0, fmt.Errorf("read opencode event log end: %w", err)
	}
	return last, nil
}

// allPage is how many rows AllEvents reads at a time.
const allPage = 1024

// AllEvents is every row of the event log of the database at path, as
// lines, in the order they were written: a whole database read at once
// (`nudge classify`). Rows read before an error are returned with it.
func AllEvents(ctx context.Context, path string) ([][]byte, error) {
	db, err := Open(new(agentdb.WAL), path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var out [][]byte
	for after := int64(0); ; {
		rows, err := Events(ctx, db.DB, after, allPage)
		for _, row := range rows {
			out, after = append(out, row.Line), row.RowID
		}
		if err != nil || len(rows) < allPage {
			return out, err
		}
	}
}
