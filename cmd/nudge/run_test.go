package main

import (
	"log/slog"
	"runtime"
	"testing"
)

// Once settled, the daemon's Go code runs on one core, unless GOMAXPROCS
// says how many.
func TestOneCore(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	log := slog.New(slog.DiscardHandler)

	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "")
	oneCore(log)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS after oneCore = %d, want 1", n)
	}

	runtime.GOMAXPROCS(4)
	t.Setenv("GOMAXPROCS", "4")
	oneCore(log)
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("GOMAXPROCS after oneCore with GOMAXPROCS=4 set = %d, want 4 kept", n)
	}
}
