package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// EntryRow is one Inbox entry: something the person was told about.
type EntryRow struct {
	ID                      int64
	Time                    time.Time
	Agent, Project, Session string
	What                    string // what happened, in a sentence
	ErrorText               string // the original error text
	Class, Code             string
	Attempts                int    // continuations sent for this failure
	Provider, Model         string // what the failure happened on, where the records said
	// Outage names the outage the entry belongs to ("" for none): an
	// outage's own entry has no session and is replaced by its later one.
	Outage string
	Read   bool
}

// Entries returns the Inbox entries, newest first; only the unread ones
// when unreadOnly.
func (db *DB) Entries(ctx context.Context, unreadOnly bool) ([]EntryRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, time, agent, project, session, what, error_text, class, code, attempts, provider, model, outage, read
		FROM entries WHERE read = 0 OR NOT ? ORDER BY time DESC, id DESC`, unreadOnly)
	if err != nil {
		return nil, fmt.Errorf("inbox: entries: %w", err)
	}
	var out []EntryRow
	err = scanAll(rows, func(s scanner) error {
		var e EntryRow
		var t sql.NullInt64
		err := s.Scan(&e.ID, &t, &e.Agent, &e.Project, &e.Session, &e.What, &e.ErrorText, &e.Class, &e.Code, &e.Attempts, &e.Provider, &e.Model, &e.Outage, &e.Read)
		e.Time = fromMS(t)
		out = append(out, e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: entries: %w", err)
	}
	return out, nil
}

// Unread counts the unread entries.
func (db *DB) Unread(ctx context.Context) (int, error) {
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM entries WHERE read = 0").Scan(&n); err != nil {
		return 0, fmt.Errorf("inbox: count unread entries: %w", err)
	}
	return n, nil
}

// MarkRead marks one entry read; an unknown id is ErrNotFound.
func (db *DB) MarkRead(ctx context.Context, id int64) error {
	res, err := db.w.ExecContext(ctx, "UPDATE entries SET read = 1 WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("inbox: mark entry %d read: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("inbox: mark entry %d read: %w", id, orNotFound(err))
	}
	db.announce()
	return nil
}

// MarkAllRead marks every entry read.
func (db *DB) MarkAllRead(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, "UPDATE entries SET read = 1 WHERE read = 0"); err != nil {
		return fmt.Errorf("inbox: mark all entries read: %w", err)
	}
	db.announce()
	return nil
}

// Clear removes every Inbox entry.
func (db *DB) Clear(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, "DELETE FROM entries"); err != nil {
		return fmt.Errorf("inbox: clear entries: %w", err)
	}
	db.announce()
	return nil
}

// orNotFound is err, or ErrNotFound when there is none.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return ErrNotFound
}
