package watch

import (
	"context"
	"slices"
	"time"
)

// What the consumer stores decides where the watcher goes back to: it
// acknowledges each batch once its positions are stored (Ack), or asks for
// everything not acknowledged to be read again (Rewind) when storing failed.
// A position therefore advances only with a successful store
// (docs/durability.md).

// sentBatch is a batch handed out and not acknowledged yet.
type sentBatch struct {
	seq   uint64
	ends  map[*tail]commitPoint // where each tail stands after it
	gone  []Record              // snapshot removals it reported
	ready bool
}

// Ack tells the watcher that every batch up to and including seq is stored.
// It does not block.
func (w *Watcher) Ack(seq uint64) {
	for {
		cur := w.acked.Load()
		if seq <= cur {
			return
		}
		if w.acked.CompareAndSwap(cur, seq) {
			break
		}
	}
	select {
	case w.ackWake <- struct{}{}:
	default:
	}
}

// Rewind tells the watcher that the batches after the last acknowledged one
// were not stored: it drops what it has not handed out yet, goes back to the
// last stored position of every file read since, and reads on from there.
// Batches read after that carry the returned epoch (or a later one); those
// with an older one are to be ignored. It does not block.
func (w *Watcher) Rewind() (epoch uint64) {
	epoch = w.rewinds.Add(1)
	w.wakeRewind()
	return epoch
}

func (w *Watcher) wakeRewind() {
	select {
	case w.rewindWake <- struct{}{}:
	default:
	}
}

// prune moves the tails' committed positions up to the acknowledged batches.
func (w *Watcher) prune() {
	acked := w.acked.Load()
	n := 0
	for _, sb := range w.inflight {
		if sb.seq > acked {
			break
		}
		for t, c := range sb.ends {
			t.commit(c, w.opts.LineCap)
			t.cool(sb.seq)
		}
		if sb.ready {
			w.readyAcked = true
		}
		n++
	}
	w.inflight = slices.Delete(w.inflight, 0, n)
}

// rewind applies the Rewinds asked for: every file read since its last
// stored position is read again from there, and the snapshot removals and
// the end of the first scan not acknowledged are reported again.
func (w *Watcher) rewind(ctx context.Context) {
	w.prune()
	w.epoch = w.rewinds.Load()
	acked := w.acked.Load()
	var gone []Record
	for _, sb := range w.inflight {
		gone = append(gone, sb.gone...)
	}
	w.inflight = nil
	w.dropBatch()
	gone, w.lostGone = append(gone, w.lostGone...), nil
	n := 0
	for _, t := range w.tails {
		if t.lastBatch <= acked {
			continue
		}
		// The descriptor held may be of a file put in the stored one's
		// place since: closed, the read below opens the path again and
		// checks the stored position's file whole.
		w.close(t)
		t.resetTo(t.stored(), w.opts.LineCap)
		t.checkpoint = t.src.positioned()
		n++
		w.read(ctx, t)
	}
	for _, g := range gone {
		if w.tails[g.Path] == nil {
			w.emitGone(ctx, g)
		}
	}
	if w.ready.Load() && !w.readyAcked {
		w.batch.Ready = true
	}
	w.log.Info("reading again from the last stored positions", "files", n, "epoch", w.epoch)
	w.flush(ctx)
}

// emitFrom queues a record of t.
func (w *Watcher) emitFrom(ctx context.Context, t *tail, rec Record) {
	t.lastBatch = w.seq + 1
	if !rec.Gone && t.src.positioned() {
		w.batchEnds[t] = t.pointAt(rec.End, rec.mark)
		if t.reading != nil {
			t.checkpoint = false
		}
	}
	w.emit(ctx, rec)
}

// emitGone queues the removal of a snapshot file.
func (w *Watcher) emitGone(ctx context.Context, rec Record) {
	w.batchGone = append(w.batchGone, rec)
	w.emit(ctx, rec)
}

// emit queues a record, sending the batch once it is full. Checkpoints do
// not fill a batch: the positions of a first look go out together.
func (w *Watcher) emit(ctx context.Context, rec Record) {
	if w.batch.Records == nil { // sized as the last batch was, rather than grown
		w.batch.Records = make([]Record, 0, max(1, min(w.lastRecords, batchRecords)))
	}
	w.batch.Records = append(w.batch.Records, rec)
	if rec.Checkpoint {
		return
	}
	w.batchCount++
	w.batchSize += len(rec.Line)
	if w.batchCount >= batchRecords || w.batchSize >= batchBytes {
		w.flush(ctx)
	}
}

// flush sends the queued batch, unless ctx ends first or a Rewind is asked
// for (the Rewind then reads it again).
func (w *Watcher) flush(ctx context.Context) {
	b := w.batch
	if len(b.Records) == 0 && b.Synced == "" && !b.Ready {
		return
	}
	w.prune()
	b.Seq, b.Epoch, b.lines = w.seq+1, w.epoch, w.batchLines
	select {
	case w.out <- b:
		w.seq++
		w.lastSent, w.lastRecords = time.Now(), len(b.Records)
		w.inflight = append(w.inflight, sentBatch{seq: b.Seq, ends: w.batchEnds, gone: w.batchGone, ready: b.Ready})
		w.batchLines = nil // the batch's now
		w.clearBatch()
	case <-w.rewindWake:
		w.dropBatch()
		w.wakeRewind() // for the Run loop, once the current work is done
	case <-ctx.Done():
		w.clearBatch()
	}
}

// dropBatch forgets the batch being built: a sync it answers is asked
// again, a snapshot removal it reports is kept for the Rewind.
func (w *Watcher) dropBatch() {
	w.lostGone = append(w.lostGone, w.batchGone...)
	if p := w.batch.Synced; p != "" {
		w.syncMu.Lock()
		w.syncs = append(w.syncs, p)
		w.syncMu.Unlock()
		select {
		case w.syncWake <- struct{}{}:
		default:
		}
	}
	w.clearBatch()
}

// clearBatch forgets the batch being built; lines of it not handed out are
// released.
func (w *Watcher) clearBatch() {
	w.batchLines.release()
	w.batch, w.batchSize, w.batchCount, w.batchLines = Batch{}, 0, 0, nil
	w.batchEnds, w.batchGone = map[*tail]commitPoint{}, nil
}
