package daemon

import (
	"context"
	"errors"
	"testing"
)

// TestWaitStoppedWaitsForTheLock: `nudge quit` returns once the daemon is
// gone (docs/behaviour.md): WaitStopped holds while a daemon holds the
// instance lock, and returns as soon as it is released.
func TestWaitStoppedWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	if err := WaitStopped(context.Background(), dir); err != nil {
		t.Fatalf("no daemon has ever run here: %v", err)
	}
	lock, err := lockInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- WaitStopped(context.Background(), dir) }()

	// A wait given up, in a folder of its own: its flock stays asked for,
	// and once the lock is free it would hold a share of it for a moment.
	other := t.TempDir()
	held, err := lockInstance(other)
	if err != nil {
		t.Fatal(err)
	}
	defer held.release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitStopped(ctx, other); !errors.Is(err, context.Canceled) {
		t.Fatalf("with the lock held, WaitStopped = %v; want it waiting until its context ends", err)
	}
	select {
	case err := <-waited:
		t.Fatalf("WaitStopped returned %v with the lock held", err)
	default:
	}

	lock.release()
	if err := <-waited; err != nil {
		t.Fatalf("after the release: %v", err)
	}
	// A daemon starting next is not kept out by the wait.
	again, err := lockInstance(dir)
	if err != nil {
		t.Fatalf("a daemon started after the wait: %v", err)
	}
	again.release()
}
