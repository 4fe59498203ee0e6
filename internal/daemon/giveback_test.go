package daemon

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Memory is given back once the first scan is stored, and again once what
// was read after it has been quiet for giveBackAfter: once per busy spell,
// never on a timer while nothing is read.
func TestMemoryGivenBackOncePerQuiet(t *testing.T) {
	c := newCore(t)
	c.level = slog.LevelDebug
	c.start()
	select {
	case <-c.daemon.Settled():
	case <-time.After(10 * time.Second):
		t.Fatal("not settled once the first scan is stored")
	}
	given := func() int { return strings.Count(c.logs.String(), `msg="gave memory back"`) }
	settle := func() { c.advance(0) } // the loop has looked after the last advance
	if n := given(); n != 1 {
		t.Fatalf("memory given back %d times after the first scan, want once", n)
	}
	c.advance(time.Hour)
	settle()
	if n := given(); n != 1 {
		t.Fatalf("memory given back %d times after an idle hour, want once (after the first scan)", n)
	}
	for spell := 2; spell <= 3; spell++ {
		c.write(prompt("p"+string(rune('0'+spell)), "task"), authError("e"+string(rune('0'+spell))))
		c.eventually("the dead turn told", func() bool { return len(c.entries()) == spell-1 })
		c.advance(giveBackAfter - time.Second)
		settle()
		if n := given(); n != spell-1 {
			t.Fatalf("memory given back %d times before the spell was quiet for %v, want %d", n, giveBackAfter, spell-1)
		}
		c.advance(time.Second)
		c.eventually("memory given back after the quiet", func() bool { return given() == spell })
		c.advance(time.Hour)
		settle()
		if n := given(); n != spell {
			t.Fatalf("memory given back %d times, want %d: once per quiet spell", n, spell)
		}
	}
}
