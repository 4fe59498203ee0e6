package daemon

import (
	"context"
	"time"

	"nudge/internal/status"
)

// A store that refuses writes (a full disk, a database it cannot lock)
// never loses anything: the step it refused is undone, the watcher goes
// back to the last stored positions, and the loop takes nothing new until
// the next try, after a pause that doubles up to maxStoreWait. Once a
// write succeeds, what was written meanwhile is read again and told once
// (docs/durability.md).

// Pauses between tries of a failing store.
const (
	firstStoreWait = time.Second
	maxStoreWait   = 30 * time.Second
)

// failing is the state of a store that refuses writes.
type failing struct {
	since time.Time
	err   string
	tries int
	next  time.Time // the next try
	wait  time.Duration
}

// holding tells whether the loop waits for the next try of a failing store.
func (d *Daemon) holding() bool {
	return d.failing != nil && d.now().Before(d.failing.next)
}

// failed undoes a step the store refused, has the watcher read its records
// again, keeps the step for later when nothing would bring it back, and
// says so.
func (d *Daemon) failed(st *step, err error) {
	d.undo(st)
	if st.seq != 0 {
		d.epoch = d.source.Rewind()
	}
	if st.redo != nil {
		d.redo = append(d.redo, st.redo)
	}
	now := d.now()
	f := d.failing
	if f == nil {
		f = &failing{since: now, wait: firstStoreWait}
		d.failing = f
		d.log.Error("cannot store what was read; nothing is lost: it is read again and told once storing works", "err", err)
	} else {
		f.wait = min(2*f.wait, maxStoreWait)
		d.log.Warn("storing still fails", "err", err, "tries", f.tries+1, "since", f.since.Format(time.RFC3339))
	}
	f.tries++
	f.err = err.Error()
	f.next = now.Add(f.wait)
	d.refreshView()
}

// stored notes a successful write: a failing store works again.
func (d *Daemon) stored() {
	if f := d.failing; f != nil {
		d.failing = nil
		d.log.Info("storing works again; what was held back is read again", "failed_for", d.now().Sub(f.since).Round(time.Second).String(), "tries", f.tries)
		d.refreshView()
	}
}

// redoSteps takes again the steps kept by failed, until one fails again.
func (d *Daemon) redoSteps(ctx context.Context) {
	todo := d.redo
	d.redo = nil
	for i, f := range todo {
		if d.holding() {
			d.redo = append(d.redo, todo[i:]...)
			return
		}
		f(ctx)
	}
}

// storeView is the failing store as the views show it; nil while it works.
func (d *Daemon) storeView() *status.StoreFailing {
	f := d.failing
	if f == nil {
		return nil
	}
	return &status.StoreFailing{Since: f.since, Error: f.err, Tries: f.tries, NextTry: f.next}
}
