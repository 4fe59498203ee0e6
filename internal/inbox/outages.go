package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// OutageRow is one provider outage (docs/behaviour.md §9): its provider and
// start name it; the rest is the daemon's record of it, as JSON.
type OutageRow struct {
	Provider   string
	Start, End time.Time // End is zero while it lasts
	GaveUp     bool
	Sessions   int    // how many sessions it held
	Outage     []byte // internal/outage's Outage, JSON
}

const upsertOutage = `INSERT INTO outages (provider, start, end, gave_up, sessions, outage) VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (provider, start) DO UPDATE SET end = excluded.end, gave_up = excluded.gave_up,
	sessions = excluded.sessions, outage = excluded.outage`

// Outages returns the stored outages, the newest first; only those that
// last when openOnly.
func (db *DB) Outages(ctx context.Context, openOnly bool) ([]OutageRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT provider, start, end, gave_up, sessions, outage FROM outages
		WHERE end IS NULL OR NOT ? ORDER BY start DESC`, openOnly)
	if err != nil {
		return nil, fmt.Errorf("inbox: outages: %w", err)
	}
	var out []OutageRow
	err = scanAll(rows, func(s scanner) error {
		var o OutageRow
		var start, end sql.NullInt64
		err := s.Scan(&o.Provider, &start, &end, &o.GaveUp, &o.Sessions, &o.Outage)
		o.Start, o.End = fromMS(start), fromMS(end)
		out = append(out, o)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: outages: %w", err)
	}
	return out, nil
}

// ErrorCount is how many provider errors of one provider fell in one
// bucket of a picture (ProviderErrors).
type ErrorCount struct {
	Provider string
	Bucket   int // from 0, the bucket starting at since
	Count    int
}

// ProviderErrors counts the dead turns classed provider_error that name a
// provider, recorded from since on, per provider and per bucket of step.
func (db *DB) ProviderErrors(ctx context.Context, since time.Time, step time.Duration) ([]ErrorCount, error) {
	if step <= 0 {
		return nil, fmt.Errorf("inbox: provider errors: bucket of %v", step)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT provider, (coalesce(time, detected_at) - ?1) / ?2, count(*) FROM events
		WHERE class = 'provider_error' AND coalesce(time, detected_at) >= ?1 AND kind = 'turn_failed' AND provider <> ''
		GROUP BY 1, 2 ORDER BY 1, 2`, since.UnixMilli(), step.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("inbox: provider errors: %w", err)
	}
	var out []ErrorCount
	err = scanAll(rows, func(s scanner) error {
		var c ErrorCount
		err := s.Scan(&c.Provider, &c.Bucket, &c.Count)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbox: provider errors: %w", err)
	}
	return out, nil
}
