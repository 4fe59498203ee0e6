package memory

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// restHeadroom is how far the memory the runtime holds may grow while the
// collector rests before a collection runs anyway: what wakes that bring
// no work (a liveness check, a folder looked at) leave may not pile up
// without bound, and about what the collector would let an idle daemon's
// heap grow by when awake.
const restHeadroom = 16 << 20

// rest is the collector's settings from before Rest, while it rests.
var rest struct {
	sync.Mutex
	on      bool
	percent int
	limit   int64
}

// Rest turns the collector off while the daemon does nothing: the runtime
// otherwise runs one every two minutes, which costs CPU and maps back the
// program pages ReleaseProgram gave back, and an idle daemon frees nothing
// for it to find. A memory limit at what the runtime holds now plus 16 MiB
// still starts a collection if something allocates before Wake. Rest while
// resting does nothing; the settings are the process's, so one daemon per
// process uses them (docs/performance.md §3).
func Rest() {
	rest.Lock()
	defer rest.Unlock()
	if rest.on {
		return
	}
	rest.on = true
	rest.limit = debug.SetMemoryLimit(-1)
	limit := held()
	if limit > math.MaxInt64-restHeadroom {
		limit = math.MaxInt64
	} else {
		limit += restHeadroom
	}
	if limit < rest.limit {
		debug.SetMemoryLimit(limit)
	}
	rest.percent = debug.SetGCPercent(-1)
}

// Wake gives the collector back the settings it had before Rest, when the
// daemon has work again. Wake while awake does nothing.
func Wake() {
	rest.Lock()
	defer rest.Unlock()
	if !rest.on {
		return
	}
	rest.on = false
	debug.SetGCPercent(rest.percent)
	debug.SetMemoryLimit(rest.limit)
}

// held is the memory the runtime holds from the system: what it mapped less
// what it gave back, the measure its memory limit applies to.
func held() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
