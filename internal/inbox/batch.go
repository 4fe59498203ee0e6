package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Position is how far a session file has been read: the file's identity
// (device, inode, a fingerprint of its first bytes), the byte offset, and a
// fingerprint of the bytes just before it (docs/durability.md).
type Position struct {
	Path        string
	Dev, Inode  uint64
	Fingerprint string
	Offset      int64
	Mark        string
}

// EventRow is one classified event as stored for `nudge explain`.
type EventRow struct {
	// Ident is the event's identity (docs/durability.md): an event whose
	// Ident is stored already is not stored again. Nil for events that
	// come from no record.
	Ident                   []byte
	Agent, Session, Project string
	Time                    time.Time // the record's own timestamp
	DetectedAt              time.Time // when the daemon read it
	Kind, Class, Code       string
	Message                 string
	ResetAt                 time.Time
	Detail                  string
	Provider                string // a dead turn's provider id
}

// SessionRow is one session's current state and its retry machine.
type SessionRow struct {
	Agent, Session, Project, Path, State, Note string
	Until, UpdatedAt                           time.Time
	Machine                                    []byte // the retry machine, JSON
}

// DecisionRow records why the retry machine did or did not act.
type DecisionRow struct {
	Agent, Session string
	Time           time.Time
	What           string
}

// MetaRow is one value of the meta table.
type MetaRow struct{ Key, Value string }

// Outcome is how an attempt stored "sending" ended.
type Outcome struct {
	ID                      int64
	Status                  string // AttemptSent or AttemptFailed
	Backend, Target, Reason string
	Finished                time.Time
}

// Batch is everything one step of the pipeline wants stored together.
type Batch struct {
	Positions []Position
	// Looked are the positions a first look took, at the end of files it
	// did not read (no fingerprint, no mark): stored per folder, each in
	// place of the file's earlier position. A path is in Positions or in
	// Looked, not both.
	Looked    []Position
	Events    []EventRow
	Sessions  []SessionRow // each replaces the stored row of its session
	Entries   []EntryRow   // new Inbox entries; ID is ignored
	Decisions []DecisionRow
	// Attempts are continuations about to be typed, stored "sending" with
	// the session state that issued them (docs/behaviour.md §7). Commit sets each one's
	// ID; an attempt begun before (also by an earlier run of the daemon)
	// keeps ID 0 and must not be sent again.
	Attempts []AttemptRow
	// Outcomes finish attempts stored "sending"; one finished already is
	// left as it is.
	Outcomes []Outcome
	Meta     []MetaRow
	// Outages replace the stored rows of the same provider and start.
	Outages []OutageRow
	// Forget removes the positions of these paths (files that are gone).
	Forget []string
}

// Empty reports whether b stores nothing.
func (b Batch) Empty() bool {
	return len(b.Positions)+len(b.Looked)+len(b.Events)+len(b.Sessions)+len(b.Entries)+len(b.Decisions)+
		len(b.Attempts)+len(b.Outcomes)+len(b.Meta)+len(b.Outages)+len(b.Forget) == 0
}

// The statements Commit prepares once per batch.
const (
	upsertPosition = `INSERT INTO positions (path, dev, inode, fingerprint, offset, mark) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET dev = excluded.dev, inode = excluded.inode,
		fingerprint = excluded.fingerprint, offset = excluded.offset, mark = excluded.mark`
	insertEvent = `INSERT INTO events (ident, agent, session, project, time, detected_at, kind, class, code, message, reset_at, detail, provider)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	upsertSession = `INSERT INTO sessions (agent, session, project, path, state, note, until, updated_at, machine)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent, session) DO UPDATE SET project = excluded.project, path = excluded.path,
		state = excluded.state, note = excluded.note, until = excluded.until,
		updated_at = excluded.updated_at, machine = excluded.machine`
	insertEntry = `INSERT INTO entries (time, agent, project, session, what, error_text, class, code, attempts, provider, model, outage, read)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// replacedEntry removes an outage's own entry that a new one replaces.
	replacedEntry  = "DELETE FROM entries WHERE outage = ? AND session = ''"
	insertDecision = `INSERT INTO decisions (agent, session, time, what) VALUES (?, ?, ?, ?)`
	finishAttempt  = `UPDATE attempts SET status = ?, backend = ?, target = ?, reason = ?, finished = ?
		WHERE id = ? AND status = 'sending'`
	upsertMeta     = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
	deletePosition = "DELETE FROM positions WHERE path = ?"
)

// writeStatements are what a batch runs once per row, prepared once when
// the database is opened (a busy moment stores a batch every 10–50 ms).
var writeStatements = []string{upsertPosition, insertEvent, upsertSession, insertEntry, insertDecision, finishAttempt, upsertMeta, deletePosition}

// Commit stores the whole batch in one transaction: offsets land together
// with the events, states, entries and attempts they produced, or not at all.
func (db *DB) Commit(ctx context.Context, b Batch) error {
	if b.Empty() {
		return nil
	}
	for _, o := range b.Outcomes {
		if o.Status != AttemptSent && o.Status != AttemptFailed {
			return fmt.Errorf("inbox: commit batch: attempt %d: status %q is not %q or %q", o.ID, o.Status, AttemptSent, AttemptFailed)
		}
	}
	err := db.write(ctx, func(tx writeTx) error {
		for _, step := range []func() error{
			func() error { return storePositions(ctx, tx, b.Positions) },
			func() error { return storeLooked(ctx, tx, b.Looked) },
			func() error {
				return each(ctx, tx, insertEvent, b.Events, func(e EventRow) []any {
					return []any{e.Ident, e.Agent, e.Session, e.Project, ms(e.Time), ms(e.DetectedAt),
						e.Kind, e.Class, e.Code, e.Message, ms(e.ResetAt), e.Detail, e.Provider}
				})
			},
			func() error {
				return each(ctx, tx, upsertSession, b.Sessions, func(s SessionRow) []any {
					return []any{s.Agent, s.Session, s.Project, s.Path, s.State, s.Note,
						ms(s.Until), ms(s.UpdatedAt), s.Machine}
				})
			},
			func() error {
				own := slices.DeleteFunc(slices.Clone(b.Entries), func(e EntryRow) bool { return e.Outage == "" || e.Session != "" })
				return each(ctx, tx, replacedEntry, own, func(e EntryRow) []any { return []any{e.Outage} })
			},
			func() error {
				return each(ctx, tx, insertEntry, b.Entries, func(e EntryRow) []any {
					return []any{ms(e.Time), e.Agent, e.Project, e.Session, e.What, e.ErrorText,
						e.Class, e.Code, e.Attempts, e.Provider, e.Model, e.Outage, e.Read}
				})
			},
			func() error { return beginAttempts(ctx, tx, b.Attempts) },
			func() error {
				return each(ctx, tx, upsertOutage, b.Outages, func(o OutageRow) []any {
					return []any{o.Provider, ms(o.Start), ms(o.End), o.GaveUp, o.Sessions, o.Outage}
				})
			},
			func() error {
				return each(ctx, tx, insertDecision, b.Decisions, func(d DecisionRow) []any {
					return []any{d.Agent, d.Session, ms(d.Time), d.What}
				})
			},
			func() error {
				return each(ctx, tx, finishAttempt, b.Outcomes, func(o Outcome) []any {
					return []any{o.Status, o.Backend, o.Target, o.Reason, ms(orNow(o.Finished)), o.ID}
				})
			},
			func() error {
				return each(ctx, tx, upsertMeta, b.Meta, func(m MetaRow) []any { return []any{m.Key, m.Value} })
			},
			func() error {
				if err := each(ctx, tx, deletePosition, b.Forget, func(p string) []any { return []any{p} }); err != nil {
					return err
				}
				return forgetLooked(ctx, tx, b.Forget)
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("inbox: commit batch: %w", err)
	}
	db.announce()
	return nil
}

// storePositions stores each position as a row of its own.
func storePositions(ctx context.Context, tx writeTx, positions []Position) error {
	return each(ctx, tx, upsertPosition, positions, func(p Position) []any {
		return []any{p.Path, int64(p.Dev), int64(p.Inode), p.Fingerprint, p.Offset, p.Mark}
	})
}

// each runs the prepared statement query once per row, with args(row).
func each[T any](ctx context.Context, tx writeTx, query string, rows []T, args func(T) []any) error {
	if len(rows) == 0 {
		return nil
	}
	stmt, err := tx.prepare(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	defer stmt.Close()
	for i, row := range rows {
		if _, err := stmt.ExecContext(ctx, args(row)...); err != nil {
			return fmt.Errorf("row %d of %d (%T): %w", i+1, len(rows), row, err)
		}
	}
	return nil
}

// knownChunk bounds the identities asked for in one query.
const knownChunk = 500

// Known returns which of idents are stored already (as strings of their
// bytes).
func (db *DB) Known(ctx context.Context, idents [][]byte) (map[string]bool, error) {
	known := map[string]bool{}
	for len(idents) > 0 {
		chunk := idents[:min(len(idents), knownChunk)]
		idents = idents[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := "SELECT ident FROM events WHERE ident IN (?" + strings.Repeat(", ?", len(chunk)-1) + ")"
		rows, err := db.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("inbox: known events: %w", err)
		}
		err = scanAll(rows, func(s scanner) error {
			var id []byte
			err := s.Scan(&id)
			known[string(id)] = true
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("inbox: known events: %w", err)
		}
	}
	return known, nil
}

// Positions returns every stored read position, one per path: a file's
// row, else its place in its folder's row (looked.go).
func (db *DB) Positions(ctx context.Context) ([]Position, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // both tables as of one moment
	if err != nil {
		return nil, fmt.Errorf("inbox: positions: %w", err)
	}
	defer tx.Rollback()
	own, err := queryPositions(ctx, tx, "")
	if err != nil {
		return nil, fmt.Errorf("inbox: positions: %w", err)
	}
	out, err := readLooked(ctx, tx, own)
	if err != nil {
		return nil, fmt.Errorf("inbox: positions: %w; %s", err, damagedAdvice(db.path))
	}
	return append(out, own...), nil
}

// queryPositions reads the rows of positions, those that where (a WHERE
// clause, or "") picks.
func queryPositions(ctx context.Context, q querier, where string) ([]Position, error) {
	rows, err := q.QueryContext(ctx, "SELECT path, dev, inode, fingerprint, offset, mark FROM positions "+where)
	if err != nil {
		return nil, err
	}
	var out []Position
	err = scanAll(rows, func(s scanner) error {
		var p Position
		var dev, inode int64
		if err := s.Scan(&p.Path, &dev, &inode, &p.Fingerprint, &p.Offset, &p.Mark); err != nil {
			return err
		}
		p.Dev, p.Inode = uint64(dev), uint64(inode)
		out = append(out, p)
		return nil
	})
	return out, err
}

const selectSession = "SELECT agent, session, project, path, state, note, until, updated_at, machine FROM sessions"

func scanSession(s scanner) (SessionRow, error) {
	var r SessionRow
	var until, updated sql.NullInt64
	err := s.Scan(&r.Agent, &r.Session, &r.Project, &r.Path, &r.State, &r.Note, &until, &updated, &r.Machine)
	r.Until, r.UpdatedAt = fromMS(until), fromMS(updated)
	return r, err
}

// Sessions returns every stored session, by agent and session id.
func (db *DB) Sessions(ctx context.Context) ([]SessionRow, error) {
	rows, err := db.r.QueryContext(ctx, selectSession+" ORDER BY agent, session")
	if err != nil {
		return nil, fmt.Errorf("inbox: sessions: %w", err)
	}
	var out []SessionRow
	err = scanAll(rows, func(s scanner) error {
		r, err := scanSession(s)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: sessions: %w", err)
	}
	return out, nil
}

// Session returns one session's row, and whether it is stored.
func (db *DB) Session(ctx context.Context, agent, session string) (SessionRow, bool, error) {
	r, err := scanSession(db.r.QueryRowContext(ctx, selectSession+" WHERE agent = ? AND session = ?", agent, session))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionRow{}, false, nil
	}
	if err != nil {
		return SessionRow{}, false, fmt.Errorf("inbox: session %s/%s: %w", agent, session, err)
	}
	return r, true, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanAll calls fn for each row, then closes rows.
func scanAll(rows *sql.Rows, fn func(scanner) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
