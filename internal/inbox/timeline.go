package inbox

import (
	"context"
	"database/sql"
	"fmt"
)

// Timeline returns one session's events, decisions and attempts, each in
// time order, read from one snapshot (for `nudge explain`). An empty agent
// matches the session id under any agent.
func (db *DB) Timeline(ctx context.Context, agent, session string) (events []EventRow, decisions []DecisionRow, attempts []AttemptRow, err error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("inbox: timeline of %s/%s: %w", agent, session, err)
	}
	defer tx.Rollback()

	const who = " WHERE (?1 = '' OR agent = ?1) AND session = ?2 "
	rows, err := tx.QueryContext(ctx, `SELECT agent, session, project, time, detected_at, kind, class, code, message, reset_at, detail, provider
		FROM events`+who+`ORDER BY coalesce(time, detected_at), id`, agent, session)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("inbox: events of %s/%s: %w", agent, session, err)
	}
	err = scanAll(rows, func(s scanner) error {
		var e EventRow
		var t, detected, reset sql.NullInt64
		err := s.Scan(&e.Agent, &e.Session, &e.Project, &t, &detected, &e.Kind, &e.Class, &e.Code, &e.Message, &reset, &e.Detail, &e.Provider)
		e.Time, e.DetectedAt, e.ResetAt = fromMS(t), fromMS(detected), fromMS(reset)
		events = append(events, e)
		return err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("inbox: events of %s/%s: %w", agent, session, err)
	}

	rows, err = tx.QueryContext(ctx, "SELECT agent, session, time, what FROM decisions"+who+"ORDER BY time, id", agent, session)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("inbox: decisions of %s/%s: %w", agent, session, err)
	}
	err = scanAll(rows, func(s scanner) error {
		var d DecisionRow
		var t sql.NullInt64
		err := s.Scan(&d.Agent, &d.Session, &t, &d.What)
		d.Time = fromMS(t)
		decisions = append(decisions, d)
		return err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("inbox: decisions of %s/%s: %w", agent, session, err)
	}

	attempts, err = db.attempts(ctx, tx, agent, session)
	if err != nil {
		return nil, nil, nil, err
	}
	return events, decisions, attempts, nil
}
