package watch

import (
	"testing"
	"time"
)

// The folder-level source hands out a change after a quiet moment at once,
// and the changes that follow within the latency together, each folder
// once, a latency after the last hand-out (FSEvents with NoDefer).
func TestCoalescerLeadingEdge(t *testing.T) {
	const latency = 2 * time.Second
	c := newCoalescer(latency)
	defer c.close()
	take := func(within time.Duration) ([]folderChange, time.Duration) {
		start := time.Now()
		select {
		case got := <-c.out:
			return got, time.Since(start)
		case <-time.After(within):
			return nil, time.Since(start)
		}
	}

	c.note(folderChange{Dir: "/a"})
	if got, _ := take(latency / 2); len(got) != 1 || got[0].Dir != "/a" {
		t.Fatalf("a lone change: %v within half the latency, want /a at once", got)
	}
	c.note(folderChange{Dir: "/b"})
	c.note(folderChange{Dir: "/c"})
	c.note(folderChange{Dir: "/b"})
	if got, _ := take(latency / 4); got != nil {
		t.Fatalf("changes right after a hand-out went out early: %v", got)
	}
	got, _ := take(2 * latency)
	if len(got) != 2 || got[0].Dir != "/b" || got[1].Dir != "/c" {
		t.Fatalf("changes within the latency: %v, want /b and /c together, each once", got)
	}
	time.Sleep(latency + latency/4) // quiet again
	c.note(folderChange{Dir: "/d"})
	if got, _ := take(latency / 2); len(got) != 1 || got[0].Dir != "/d" {
		t.Fatalf("a change after a quiet latency: %v, want /d at once", got)
	}
}
