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
		key := retry.Key{Agent: r.Agent, Session: r.Session}
		out = append(out, sessionView(key, r.Project, retry.State(r.State), r.Note, r.Until, r.UpdatedAt))
	}
	return out
}
