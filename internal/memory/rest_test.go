package memory

import (
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

func TestRestStopsCollectionsUntilWake(t *testing.T) {
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)

	before := cycles()
	garbage(32 << 20)
	if cycles() == before {
		t.Fatal("32 MiB of garbage ran no collection before Rest: the test shows nothing")
	}

	Rest()
	Rest() // a second Rest keeps the settings of before the first
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("the collector's percent while resting is %d, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got > held()+restHeadroom || got == limit {
		t.Fatalf("memory limit while resting %d, want at most %d", got, held()+restHeadroom)
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
	before = cycles()
	garbage(32 << 20)
	if cycles() == before {
		t.Fatal("32 MiB of garbage after Wake ran no collection")
	}
}
