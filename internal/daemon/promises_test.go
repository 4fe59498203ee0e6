package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const (
	typingLine = "typing into tmux /tmp/tmux-0/default %3"
	signInLine = "store entry: Claude Code needs you to sign in again: run `claude /login` (or fix ANTHROPIC_API_KEY), then type continue in the session."
)

// waitState waits until the session shows state.
func (c *core) waitState(state string) {
	c.t.Helper()
	c.eventually("state "+state, func() bool {
		st := c.status()
		return len(st.Sessions) == 1 && st.Sessions[0].State == state
	})
}

// deadTurn writes a person's prompt and a provider error, and waits for
// the retry to be planned.
func (c *core) deadTurn(n int) {
	c.t.Helper()
	c.write(prompt("p"+string(rune('0'+n)), "task"), apiError("e"+string(rune('0'+n)), 500, err500))
	c.waitState("retrying")
}

// A continuation is stored "sending" before the terminal is touched, the
// place before the first key, and "sent" after.
func TestSendingDeliverSent(t *testing.T) {
	c := newCore(t)
	c.start()
	c.deadTurn(1)
	c.advance(10 * time.Second)
	c.want("store sending #1", typingLine, "deliver go on", "store sent")
}

// A crash between "sending" and "sent" never sends that attempt again; the
// Inbox entry says where the text went and that it sits unsent in the
// prompt when the screen shows it there.
func TestCrashWhileTypingIsToldNeverSentAgain(t *testing.T) {
	for _, c := range []struct {
		name, screen string
		first        bool // the crash comes before the place is recorded
		what         string
	}{
		{"shown at the prompt", "$ claude\n> task\n\n> " + coreText + "\n\n", false,
			"nudge stopped after pasting its continuation into Claude Code at tmux /tmp/tmux-0/default %3 and before pressing Enter, so it sits unsent in the prompt there and nudge types nothing over it; press Enter to send it, or clear the prompt before you type."},
		{"screen unknown", "", false,
			"nudge stopped while typing its continuation into Claude Code at tmux /tmp/tmux-0/default %3, so it may sit unsent in the prompt there and nudge types nothing over it; check the prompt before you type."},
		{"before typing", "", true,
			"nudge stopped before typing its continuation into Claude Code and does not send it again; type continue in the session yourself."},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newCore(t)
			w.terminal.hang, w.terminal.hangFirst, w.terminal.screen = make(chan struct{}), c.first, c.screen
			w.start()
			w.deadTurn(1)
			w.advance(10 * time.Second)
			if c.first {
				w.want("store sending #1", "locate")
			} else {
				w.want("store sending #1", typingLine, "paste go on")
			}
			w.stop() // a crash: the outcome is never stored

			w.log.calls = nil
			w.terminal.hang = nil
			w.start()
			w.advance(time.Hour)
			w.want("store failed "+c.what, "store entry: "+c.what, "notify Claude Code needs attention")
			if es := w.entries(); len(es) != 1 || es[0].ErrorText != err500 || es[0].Attempts != 1 {
				t.Errorf("entries %+v", es)
			}
		})
	}
}

// A store that refuses writes holds everything back: nothing is told, no
// position advances; once it works, what was written meanwhile is told
// once, in order.
func TestStoreFailureLosesNothingAndTellsOnce(t *testing.T) {
	c := newCore(t)
	c.start()
	c.store.refusing(true)
	c.write(prompt("p1", "one"), authError("e1"), prompt("p2", "two"), authError("e2"))
	c.want("store refused")
	st := c.status().Daemon.StoreFailing
	if st == nil || st.Error != errDiskFull.Error() || st.Tries != 1 || !st.NextTry.After(st.Since) {
		t.Fatalf("status store_failing = %+v", st)
	}
	if n := c.events(); len(n) != 0 {
		t.Fatalf("events stored while the store refuses: %v", n)
	}
	pos, _ := c.store.Positions(context.Background())
	for _, p := range pos {
		if p.Path == c.transcript() && p.Offset != 0 {
			t.Fatalf("a position advanced past what was not stored: %+v", p)
		}
	}

	c.write(prompt("p3", "three"), authError("e3")) // written meanwhile
	c.advance(time.Second)                          // the next try: refused again
	c.eventually("a second try", func() bool { return c.status().Daemon.StoreFailing.Tries == 2 })
	c.store.refusing(false)
	c.advance(2 * time.Second)
	// Read again from the last stored position: the three turns at once.
	c.want("store refused", "store refused", signInLine, signInLine, signInLine,
		"notify Claude Code needs sign-in", "notify Claude Code needs sign-in", "notify Claude Code needs sign-in")
	if n := c.events(); n["turn_failed"] != 3 || n["user_message"] != 3 {
		t.Errorf("events %v, want each of the three turns once", n)
	}
	if c.status().Daemon.StoreFailing != nil {
		t.Error("the status still says the store fails")
	}
}

// A refused "sending" sends nothing; the attempt is made once storing works.
func TestRefusedSendingIsSentOnceLater(t *testing.T) {
	c := newCore(t)
	c.start()
	c.deadTurn(1)
	c.store.refusing(true)
	c.advance(10 * time.Second)
	c.want("store refused")
	c.store.refusing(false)
	c.advance(5 * time.Second)
	c.want("store refused", "store sending #1", typingLine, "deliver go on", "store sent")
}

// A refused outcome is stored once storing works, and nothing is typed twice.
func TestRefusedOutcomeIsStoredLater(t *testing.T) {
	c := newCore(t)
	c.terminal.delivered = func() { c.store.refusing(true) }
	c.start()
	c.deadTurn(1)
	c.advance(10 * time.Second)
	c.want("store sending #1", typingLine, "deliver go on", "store refused")
	c.terminal.mu.Lock()
	c.terminal.delivered = nil
	c.terminal.mu.Unlock()
	c.store.refusing(false)
	c.advance(2 * time.Second)
	c.want("store sending #1", typingLine, "deliver go on", "store refused", "store sent")
	attempts, err := c.store.Attempts(context.Background(), "claude", coreSession)
	if err != nil || len(attempts) != 1 || attempts[0].Status != "sent" {
		t.Fatalf("attempts %+v, %v", attempts, err)
	}
}

// A restart reads the live registry again and may start a transcript in the
// middle of a turn's ending: neither stores an event twice.
func TestRestartStoresNoEventTwice(t *testing.T) {
	c := newCore(t)
	registry := filepath.Join(c.root, "sessions", "4242.json")
	if err := os.MkdirAll(filepath.Dir(registry), 0o700); err != nil {
		t.Fatal(err)
	}
	reg, _ := json.Marshal(map[string]any{"pid": 4242, "sessionId": coreSession, "cwd": "/p", "status": "idle", "updatedAt": 1})
	if err := os.WriteFile(registry, reg, 0o600); err != nil {
		t.Fatal(err)
	}
	c.start()
	c.write(prompt("p1", "one"), endTurn("a1"))
	c.eventually("the turn done", func() bool { return c.events()["turn_done"] == 1 })
	c.stop()
	c.write(turnDuration("d1")) // the turn's second ending, written while stopped
	for range 3 {
		c.start()
		c.stop()
	}
	c.start()
	c.write(prompt("p2", "two"), endTurn("a2"), turnDuration("d2"))
	c.eventually("the second turn done", func() bool { return c.events()["turn_done"] == 2 })
	time.Sleep(200 * time.Millisecond)
	if n := c.events(); n["turn_done"] != 2 || n["agent_idle"] != 1 || n["turn_started"] != 2 {
		t.Errorf("events after restarts %v: want 2 turn_done, 1 agent_idle, 2 turn_started", n)
	}
}

// oldHistory writes n transcripts, each ending in a provider error, before
// the daemon starts.
func (c *core) oldHistory(n int) {
	for i := range n {
		path := filepath.Join(c.root, "projects", "-p", "old"+string(rune('a'+i))+".jsonl")
		b, _ := json.Marshal(apiError("old"+string(rune('a'+i)), 500, err500))
		if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
}

// A first look stores a position for every file, together with its mark:
// a store that refuses it stores neither, and once it works both; old
// history is never told, what is added later is.
func TestFirstLookStoredTogether(t *testing.T) {
	c := newCore(t)
	c.oldHistory(5)
	c.startRefusing(true)
	c.eventually("the refused first scan", func() bool { return c.status().Daemon.StoreFailing != nil })
	looked := func() bool {
		_, ok, err := c.store.Meta(context.Background(), metaLooked+"claude:"+c.root)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if pos, _ := c.store.Positions(context.Background()); len(pos) != 0 || looked() {
		t.Fatalf("positions %d, mark %v after a refused first scan: want neither", len(pos), looked())
	}
	if c.status().Daemon.Ready {
		t.Fatal("ready before the first scan is stored")
	}
	select {
	case <-c.settled:
		t.Fatal("settled before the first scan is stored")
	default:
	}
	c.store.refusing(false)
	c.advance(2 * time.Second)
	c.eventually("the first scan stored", func() bool { return c.status().Daemon.Ready })
	select {
	case <-c.settled:
	case <-time.After(10 * time.Second):
		t.Fatal("not settled once the first scan is stored")
	}
	if pos, _ := c.store.Positions(context.Background()); len(pos) != 5 || !looked() {
		t.Fatalf("positions %d, mark %v: want all 5 with the mark", len(pos), looked())
	}
	c.stop()
	c.start()
	if es := c.entries(); len(es) != 0 {
		t.Fatalf("old history told: %+v", es)
	}
	c.write(prompt("p1", "one"), authError("e1"))
	c.eventually("the new dead turn told", func() bool { return len(c.entries()) == 1 })
}

// A first look stores the positions of the old history it does not read
// as a first look's (one row per folder, docs/performance.md §1); later
// positions are stored one by one, and a restart reads both.
func TestFirstLookStoredPerFolder(t *testing.T) {
	c := newCore(t)
	c.oldHistory(5)
	c.start()
	c.eventually("the first scan stored", func() bool { return c.status().Daemon.Ready })
	if n := c.store.looked.Load(); n != 5 {
		t.Fatalf("%d positions stored as a first look's, want 5", n)
	}
	c.write(prompt("p1", "one"), authError("e1"))
	c.eventually("the new dead turn told", func() bool { return len(c.entries()) == 1 })
	c.stop()
	c.start()
	c.eventually("ready again", func() bool { return c.status().Daemon.Ready })
	c.write(authError("e2"))
	c.eventually("the next dead turn told", func() bool { return len(c.entries()) == 2 })
	if pos, _ := c.store.Positions(context.Background()); len(pos) != 6 {
		t.Fatalf("%d positions, want the 5 looked at and the session written", len(pos))
	}
	if n := c.store.looked.Load(); n != 0 { // the store of this run
		t.Fatalf("%d positions stored as a first look's after a restart, want none", n)
	}
}

// Dead turns written while nudge was not running: a provider error too old
// is told and not retried; a recent one, still the session's last word, is
// retried.
func TestDeadTurnsWrittenWhileStopped(t *testing.T) {
	c := newCore(t)
	c.start()
	c.stop()
	old := apiError("e-old", 500, err500)
	old["timestamp"] = c.clock.now().Add(-time.Hour).Format("2006-01-02T15:04:05.000Z")
	c.write(prompt("p0", "old task"), old)
	c.start()
	c.want("store entry: the turn failed with a provider error while nudge was not running; too long ago to retry")
	c.stop()

	c.log.calls = nil
	c.write(prompt("p1", "task"), apiError("e1", 500, err500))
	c.start()
	c.waitState("retrying")
	c.advance(10 * time.Second)
	c.want("store sending #1", typingLine, "deliver go on", "store sent")
}
