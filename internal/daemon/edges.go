package daemon

import (
	"context"

	"nudge/internal/inbox"
	"nudge/internal/inject"
	"nudge/internal/notify"
	"nudge/internal/watch"
)

// The daemon's core talks to the rest of the machine through these edges:
// the real ones in Run, fakes in the tests of its promises.

// store keeps what happened (inbox.DB).
type store interface {
	Commit(ctx context.Context, b inbox.Batch) error
	Known(ctx context.Context, idents [][]byte) (map[string]bool, error)
	Typing(ctx context.Context, id int64, backend, target, place string) error
	Positions(ctx context.Context) ([]inbox.Position, error)
	Sessions(ctx context.Context) ([]inbox.SessionRow, error)
	Unfinished(ctx context.Context) ([]inbox.AttemptRow, error)
	Outages(ctx context.Context, openOnly bool) ([]inbox.OutageRow, error)
	Meta(ctx context.Context, key string) (string, bool, error)
	SetMeta(ctx context.Context, key, value string) error
	// Shrink gives back the memory of caches a large step filled.
	Shrink(ctx context.Context) error
}

// source hands out the records of the session files (watch.Watcher).
type source interface {
	Batches() <-chan watch.Batch
	Sync(path string)
	Ack(seq uint64)
	Rewind() (epoch uint64)
	Stats() watch.Stats
	// StatsChanged receives a value after Stats changed.
	StatsChanged() <-chan struct{}
}

// deliverer types continuations into terminals (inject.Injector).
type deliverer interface {
	Deliver(ctx context.Context, t inject.Target, text string) (inject.Delivery, error)
	Screen(ctx context.Context, backend string, w inject.Where) (string, error)
}

// notifier tells the person (notify.Notifier).
type notifier interface {
	Send(m notify.Message)
}
