package memory

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

var sink []byte

// garbage allocates n bytes that are dropped at once.
func garbage(n int) {
	for ; n > 0; n -= 64 << 10 {
		sink = make([]byte, 64<<10)
	}
	sink = nil
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestRestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ held, was, want int64 }{
		{20 * mib, math.MaxInt64, 20*mib + restHeadroom},    // no limit set
		{20 * mib, 100 * mib, 20*mib + restHeadroom},        // a limit far above
		{20 * mib, 30 * mib, 30 * mib},                      // a lower one is kept
		{20 * mib, 1 * mib, 1 * mib},                        // even below what is held
		{math.MaxInt64 - mib, math.MaxInt64, math.MaxInt64}, // no overflow
	} {
		if got := restLimit(c.held, c.was); got != c.want {
			t.Errorf("restLimit(%d, %d) = %d, want %d", c.held, c.was, got, c.want)
		}
	}
}

func TestRestStopsCollectionsUntilWake(t *testing.T) {
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(Wake) // a failure half-way leaves the collector on

	before := cycles()
	garbage(32 << 20)
	if cycles() == before {
		t.Fatal("32 MiB of garbage ran no collection before Rest: the test shows nothing")
	}

	debug.FreeOSMemory() // as the daemon does: nothing left to give back meanwhile
	Rest()
	Rest() // a second Rest keeps the settings of before the first
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("the collector's percent while resting is %d, want -1 (off)", got)
	}
	if got, now := debug.SetMemoryLimit(-1), held(); got == limit || got < now || got > now+restHeadroom+4<<20 {
		t.Fatalf("memory limit while resting %d, want about %d held plus %d", got, now, restHeadroom)
	}
	before = cycles()
	garbage(4 << 20)
	if n := cycles() - before; n != 0 {
		t.Fatalf("4 MiB of garbage while resting ran %d collections, want none", n)
	}
	garbage(2 * restHeadroom)
	if cycles() == before {
		t.Fatalf("%d MiB of garbage while resting ran no collection: nothing bounds the heap", 2*restHeadroom>>20)
	}

	Wake()
	Wake()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("the collector's percent after Wake is %d, want 100 as before Rest", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("memory limit after Wake %d, want %d as before Rest", got, limit)
	}
	// The collector is back: garbage runs a cycle once it passes the goal
	// the heap left by the steps above sets (up to 256 MiB; with the
	// collector off none would run at all).
	before = cycles()
	for n := 0; n < 32 && cycles() == before; n++ {
		garbage(8 << 20)
	}
	if cycles() == before {
		t.Fatal("256 MiB of garbage after Wake ran no collection")
	}
}
