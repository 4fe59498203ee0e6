package daemon

import (
	"context"

	"nudge/internal/inbox"
)

// Unread counts the unread Inbox entries and returns a channel closed at
// the Inbox's next change (a new entry, one marked read, a clear). It
// waits for Run to have opened the database and started its loop.
func (d *Daemon) Unread(ctx context.Context) (int, <-chan struct{}, error) {
	got := make(chan *inbox.DB, 1)
	select {
	case d.calls <- func() { got <- d.db }:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-d.quit:
		return 0, nil, ErrNotRunning
	}
	var db *inbox.DB
	select {
	case db = <-got:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-d.quit:
		return 0, nil, ErrNotRunning
	}
	changed := db.Changed()
	n, err := db.Unread(ctx)
	if err != nil {
		return 0, nil, err
	}
	return n, changed, nil
}
