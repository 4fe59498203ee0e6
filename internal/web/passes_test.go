package web

import (
	"testing"
	"time"
)

func TestPasses(t *testing.T) {
	once := newPasses(time.Minute, 3, true)
	a := once.issue()
	if len(a) != 64 || once.use("") || once.use(a+"0") || !once.use(a) || once.use(a) {
		t.Fatalf("a one-time pass must work exactly once")
	}
	// Beyond max, the oldest is forgotten.
	kept := newPasses(0, 3, false)
	first := kept.issue()
	for range 3 {
		kept.issue()
	}
	if kept.use(first) {
		t.Fatal("the oldest of four passes kept, max 3")
	}
	last := kept.issue()
	kept.now = func() time.Time { return time.Now().Add(1000 * time.Hour) }
	for range 2 {
		if !kept.use(last) {
			t.Fatal("a pass without a time limit must keep working")
		}
	}
	expiring := newPasses(time.Minute, 3, false)
	p := expiring.issue()
	expiring.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if expiring.use(p) {
		t.Fatal("an expired pass worked")
	}
}
