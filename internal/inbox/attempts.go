package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Attempt statuses. An attempt is "sending" from just before the terminal
// is touched until it is known to be "sent" or "failed".
const (
	AttemptSending = "sending"
	AttemptSent    = "sent"
	AttemptFailed  = "failed"
)

// AttemptRow is one continuation in the attempt ledger. Episode names the
// dead turn it answers; (Agent, Session, Episode, Attempt) is unique.
type AttemptRow struct {
	ID                            int64
	Agent, Session, Episode       string
	Attempt                       int
	Text, Status, Backend, Target string
	Reason                        string // why it failed
	Started, Finished             time.Time
	// Typing is when typing began (zero: no key was sent); Backend and
	// Target then name the place, and Place holds what the backend needs
	// to look at it again.
	Typing time.Time
	Place  string
}

// beginAttempts stores each attempt as "sending" and sets its ID; one begun
// before keeps ID 0, unless it failed before any key was typed (a delivery
// held because the person was using the prompt, docs/behaviour.md §3):
// that one is begun again. Started defaults to now.
func beginAttempts(ctx context.Context, tx writeTx, attempts []AttemptRow) error {
	for i := range attempts {
		a := &attempts[i]
		if a.Started.IsZero() {
			a.Started = time.Now()
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO attempts
			(agent, session, episode, attempt, text, status, backend, target, reason, started)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (agent, session, episode, attempt) DO UPDATE
				SET status = excluded.status, text = excluded.text, backend = excluded.backend, target = excluded.target,
					reason = excluded.reason, started = excluded.started, finished = NULL, place = ''
				WHERE attempts.status = 'failed' AND attempts.typing IS NULL
			RETURNING id`,
			a.Agent, a.Session, a.Episode, a.Attempt, a.Text, AttemptSending, a.Backend, a.Target, a.Reason, ms(a.Started)).Scan(&a.ID)
		if errors.Is(err, sql.ErrNoRows) {
			a.ID = 0
			continue
		}
		if err != nil {
			return fmt.Errorf("begin attempt %d of %s/%s (episode %q): %w", a.Attempt, a.Agent, a.Session, a.Episode, err)
		}
	}
	return nil
}

// Typing records that typing attempt id begins now, into target of backend;
// place is what the backend needs to look at that place again. An attempt
// no longer "sending" is left as it is.
func (db *DB) Typing(ctx context.Context, id int64, backend, target, place string) error {
	err := db.write(ctx, func(tx writeTx) error {
		_, err := tx.ExecContext(ctx, "UPDATE attempts SET backend = ?, target = ?, place = ?, typing = ? WHERE id = ? AND status = 'sending'",
			backend, target, place, ms(time.Now()), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("inbox: typing attempt %d: %w", id, err)
	}
	return nil
}

// orNow is t, or the current time when t is zero.
func orNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

const selectAttempt = `SELECT id, agent, session, episode, attempt, text, status, backend, target, reason, started, finished, typing, place FROM attempts`

// Attempts returns a session's attempts, oldest first. An empty agent
// matches the session id under any agent.
func (db *DB) Attempts(ctx context.Context, agent, session string) ([]AttemptRow, error) {
	return db.attempts(ctx, db.r, agent, session)
}

// Unfinished returns the attempts still "sending": the daemon stopped
// between typing and recording the outcome. They are never sent again.
func (db *DB) Unfinished(ctx context.Context) ([]AttemptRow, error) {
	rows, err := db.r.QueryContext(ctx, selectAttempt+" WHERE status = ? ORDER BY started, id", AttemptSending)
	if err != nil {
		return nil, fmt.Errorf("inbox: unfinished attempts: %w", err)
	}
	out, err := scanAttempts(rows)
	if err != nil {
		return nil, fmt.Errorf("inbox: unfinished attempts: %w", err)
	}
	return out, nil
}

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (db *DB) attempts(ctx context.Context, q querier, agent, session string) ([]AttemptRow, error) {
	rows, err := q.QueryContext(ctx, selectAttempt+" WHERE (?1 = '' OR agent = ?1) AND session = ?2 ORDER BY started, id", agent, session)
	if err != nil {
		return nil, fmt.Errorf("inbox: attempts of %s/%s: %w", agent, session, err)
	}
	out, err := scanAttempts(rows)
	if err != nil {
		return nil, fmt.Errorf("inbox: attempts of %s/%s: %w", agent, session, err)
	}
	return out, nil
}

func scanAttempts(rows *sql.Rows) ([]AttemptRow, error) {
	var out []AttemptRow
	err := scanAll(rows, func(s scanner) error {
		var a AttemptRow
		var started, finished, typing sql.NullInt64
		err := s.Scan(&a.ID, &a.Agent, &a.Session, &a.Episode, &a.Attempt, &a.Text, &a.Status,
			&a.Backend, &a.Target, &a.Reason, &started, &finished, &typing, &a.Place)
		a.Started, a.Finished, a.Typing = fromMS(started), fromMS(finished), fromMS(typing)
		out = append(out, a)
		return err
	})
	return out, err
}
