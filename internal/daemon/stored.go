package daemon

import (
	"time"

	"nudge/internal/inbox"
	"nudge/internal/retry"
	"nudge/internal/status"
)

// StoredSessions is the views' list of sessions as the database last
// recorded them, for when no daemon is running: the same sessions the
// running daemon would show (Shown), newest first as stored.
func StoredSessions(rows []inbox.SessionRow, now time.Time) []status.Session {
	out := []status.Session{}
	for _, r := range rows {
		if !Shown(retry.State(r.State), r.UpdatedAt, now) {
			continue
		}
		s := status.Session{Agent: r.Agent, Session: r.Session, Project: r.Project, State: r.State, Note: r.Note, UpdatedAt: r.UpdatedAt}
		if !r.Until.IsZero() {
			u := r.Until.UTC()
			if retry.State(r.State) == retry.UsageLimit {
				s.ResetAt = &u
			} else {
				s.RetryAt = &u
			}
		}
		out = append(out, s)
	}
	return out
}
