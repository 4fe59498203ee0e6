package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"nudge/internal/usersock"
)

// resting: the Go collector is off (memory.Rest); tests run with GOGC set.
func resting() bool {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) < 0
}

// Memory is given back once the first scan is stored, and again once what
// was read has been quiet for giveBackAfter, or what was asked for
// GiveBackAfterRequest: once per busy spell, never on a timer while
// nothing happens. Between, the collector rests.
func TestMemoryGivenBackOncePerQuiet(t *testing.T) {
	c := newCore(t)
	c.level = slog.LevelDebug
	c.start()
	select {
	case <-c.settled:
	case <-time.After(10 * time.Second):
		t.Fatal("not settled once the first scan is stored")
	}
	given := func() int { return strings.Count(c.logs.String(), `msg="gave memory back"`) }
	settle := func() { c.advance(0) } // the loop has looked after the last advance
	giveBackAt := func() time.Time {
		got := make(chan time.Time, 1)
		c.daemon.calls <- func() { got <- c.daemon.giveBackAt }
		return <-got
	}
	c.eventually("memory given back after the first scan", func() bool { return given() > 0 })
	settle()
	if n := given(); n != 1 {
		t.Fatalf("memory given back %d times after the first scan, want once", n)
	}
	if !resting() {
		t.Fatal("the collector runs after the first give-back; want it resting until work comes")
	}
	c.advance(time.Hour)
	settle()
	if n := given(); n != 1 {
		t.Fatalf("memory given back %d times after an idle hour, want once (after the first scan)", n)
	}
	socket := filepath.Join(c.dir, "control.sock")
	stop, err := serveControl(context.Background(), socket, c.daemon, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	request := func() {
		t.Helper()
		resp, err := usersock.Client(socket, 5*time.Second).Get("http://nudge/status")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for spell := 2; spell <= 4; spell++ {
		quiet := giveBackAfter
		if spell < 4 {
			c.write(prompt("p"+string(rune('0'+spell)), "task"), authError("e"+string(rune('0'+spell))))
			c.eventually("the dead turn told", func() bool { return len(c.entries()) == spell-1 })
			settle()
			if spell == 3 { // a request while busy does not shorten the spell
				want := giveBackAt()
				request()
				c.eventually("the request seen", func() bool { return len(c.daemon.used) == 0 })
				if got := giveBackAt(); !got.Equal(want) {
					t.Fatalf("a request moved the give-back from %v to %v", want, got)
				}
			}
		} else { // a request alone: the CLI
			quiet = GiveBackAfterRequest
			request()
			want := c.clock.now().Add(quiet)
			c.eventually("the request seen", func() bool { return giveBackAt().Equal(want) })
		}
		if resting() {
			t.Fatalf("spell %d: the collector still rests while the daemon works", spell)
		}
		c.advance(quiet - time.Second)
		settle()
		if n := given(); n != spell-1 {
			t.Fatalf("memory given back %d times before the spell was quiet for %v, want %d", n, quiet, spell-1)
		}
		c.advance(time.Second)
		c.eventually("memory given back after the quiet", func() bool { return given() == spell })
		c.advance(time.Hour)
		settle()
		if n := given(); n != spell {
			t.Fatalf("memory given back %d times, want %d: once per quiet spell", n, spell)
		}
		if !resting() {
			t.Fatalf("spell %d: the collector runs after the give-back", spell)
		}
	}
	c.stop()
	if resting() {
		t.Fatal("the collector still rests after the daemon stopped")
	}
}
