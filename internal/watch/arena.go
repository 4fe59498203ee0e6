package watch

import (
	"sync"
	"sync/atomic"
)

// A batch's lines are copied into a few large blocks rather than one
// allocation each, and the blocks are used again once the batch is
// released: a busy agent's lines then cost the collector nothing
// (docs/performance.md §3).
const (
	arenaBlock   = 32 << 10       // the size of one block
	arenaLineMax = arenaBlock / 4 // a longer line gets an allocation of its own
)

// arenaBlocks holds the blocks of released batches. A pool is emptied by
// the collector, so the blocks of a busy hour are not held all day.
var arenaBlocks = sync.Pool{New: func() any { return new([arenaBlock]byte) }}

// lineArena holds the lines of one batch.
type lineArena struct {
	blocks   []*[arenaBlock]byte
	used     int // bytes used in the last block
	released atomic.Bool
}

// copy returns a copy of p that lives until the arena is released.
func (a *lineArena) copy(p []byte) []byte {
	if a == nil || len(p) > arenaLineMax {
		return append([]byte{}, p...)
	}
	if len(a.blocks) == 0 || arenaBlock-a.used < len(p) {
		a.blocks, a.used = append(a.blocks, arenaBlocks.Get().(*[arenaBlock]byte)), 0
	}
	b := a.blocks[len(a.blocks)-1]
	start := a.used
	a.used += copy(b[start:], p)
	return b[start:a.used:a.used]
}

// release hands the blocks back, once however often it is called. They
// are cleared first, so a line wrongly held after it reads as zeros until
// its block serves another batch.
func (a *lineArena) release() {
	if a == nil || !a.released.CompareAndSwap(false, true) {
		return
	}
	for _, b := range a.blocks {
		clear(b[:])
		arenaBlocks.Put(b)
	}
	a.blocks = nil
}
