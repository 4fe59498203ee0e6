package memory

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// restHeadroom is about how far the memory the runtime holds may grow
// while the collector rests before a collection runs anyway (the runtime
// starts one somewhat before its limit): what wakes that bring
// no work (a liveness check, a folder looked at) leave may not pile up
// without bound, and about what the collector would let an idle daemon's
// heap grow by when awake.
const restHeadroom = 16 << 20

// saved is the collector's settings from before Rest, while it rests.
var saved struct {
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
	saved.Lock()
	defer saved.Unlock()
	if saved.on {
		return
	}
	saved.on = true
	saved.limit = debug.SetMemoryLimit(-1)
	if limit := restLimit(held(), saved.limit); limit != saved.limit {
		debug.SetMemoryLimit(limit)
	}
	saved.percent = debug.SetGCPercent(-1)
}

// Wake gives the collector back the settings it had before Rest, when the
// daemon has work again. Wake while awake does nothing.
func Wake() {
	saved.Lock()
	defer saved.Unlock()
	if !saved.on {
		return
	}
	saved.on = false
	debug.SetGCPercent(saved.percent)
	debug.SetMemoryLimit(saved.limit)
}

// restLimit is the memory limit while resting, given what the runtime
// holds and the limit before: held plus restHeadroom, unless that is above
// the limit before.
func restLimit(held, was int64) int64 {
	if held > was-restHeadroom {
		return was
	}
	return held + restHeadroom
}

// held is the memory the runtime holds from the system: what it mapped less
// what it gave back, the measure its memory limit applies to.
func held() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
