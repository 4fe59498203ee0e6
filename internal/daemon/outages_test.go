package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/outage"
)

// The sessions of an outage test, besides the core's own.
var outageSessions = []string{coreSession, "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"}

// writeIn appends Claude Code records to the transcript of session.
func (c *core) writeIn(session string, records ...map[string]any) {
	c.t.Helper()
	f, err := os.OpenFile(filepath.Join(c.root, "projects", "-p", session+".jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	var buf []byte
	for _, rec := range records {
		rec["sessionId"], rec["cwd"], rec["isSidechain"] = session, "/p", false
		if _, ok := rec["timestamp"]; !ok {
			rec["timestamp"] = c.clock.now().Format("2006-01-02T15:04:05.000Z")
		}
		b, err := json.Marshal(rec)
		if err != nil {
			c.t.Fatal(err)
		}
		buf = append(append(buf, b...), '\n')
	}
	if _, err := f.Write(buf); err != nil {
		c.t.Fatal(err)
	}
}

// stateOf is session's state in the daemon's status.
func (c *core) stateOf(session string) string {
	for _, s := range c.status().Sessions {
		if s.Session == session {
			return s.State
		}
	}
	return ""
}

// sent counts the continuations stored for session.
func (c *core) sent(session string) int {
	c.t.Helper()
	_, _, at, err := c.store.Timeline(context.Background(), "claude", session)
	if err != nil {
		c.t.Fatal(err)
	}
	return len(at)
}

// storedOutages are the stored outages, newest first.
func (c *core) storedOutages() []outage.Outage {
	c.t.Helper()
	rows, err := c.store.Outages(context.Background(), false)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []outage.Outage
	for _, r := range rows {
		var o outage.Outage
		if err := json.Unmarshal(r.Outage, &o); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// outage3 starts a daemon and lets its three sessions die on Anthropic's
// provider errors a second apart: the first probes, the others wait.
func outage3(t *testing.T) *core {
	c := newCore(t)
	c.start()
	for i, s := range outageSessions {
		c.writeIn(s, prompt("p"+s[:1], "task"), apiError("e"+s[:1]+"0", 529, "API Error: 529 overloaded"))
		c.eventually("a retry planned", func() bool { return c.stateOf(s) == "retrying" })
		if i < 2 {
			c.advance(time.Second)
		}
	}
	c.advance(10 * time.Second)
	c.eventually("the probe's attempt delivered", func() bool { return count(c.log.all(), "store sent") == 1 })
	c.eventually("the others wait", func() bool {
		return c.stateOf(outageSessions[1]) == "waiting_provider" && c.stateOf(outageSessions[2]) == "waiting_provider"
	})
	return c
}

// notices are the notifications sent so far.
func (c *core) notices() []string {
	var out []string
	for _, l := range c.log.all() {
		if n, ok := strings.CutPrefix(l, "notify "); ok {
			out = append(out, n)
		}
	}
	return out
}

// During an outage only the probe's continuations go; when its turn
// completes, the waiting sessions are continued Spacing apart, and an
// outage that cost nothing is not told.
func TestOutageProbeThenFanOut(t *testing.T) {
	c := outage3(t)
	c.advance(time.Minute)
	if a, b := c.sent(outageSessions[1]), c.sent(outageSessions[2]); a != 0 || b != 0 {
		t.Fatalf("waiting sessions sent %d and %d continuations", a, b)
	}
	probe := outageSessions[0]
	c.writeIn(probe, prompt("c1", coreText), endTurn("d1"))
	c.eventually("the first waiting session continued", func() bool { return c.sent(outageSessions[1]) == 1 })
	if c.sent(outageSessions[2]) != 0 {
		t.Fatal("two waiting sessions continued in the same second")
	}
	c.advance(outage.Spacing)
	c.eventually("the second waiting session continued", func() bool { return c.sent(outageSessions[2]) == 1 })
	os := c.storedOutages()
	if len(os) != 1 || os[0].Open() || os[0].GaveUp || len(os[0].Members) != 3 || os[0].Provider != "anthropic" {
		t.Fatalf("stored outages %+v", os)
	}
	if n := c.notices(); len(n) != 0 {
		t.Errorf("an outage that cost nothing was told: %q", n)
	}
}

// An outage that outlasts a ladder is told once; the probe's give-up is
// not told on its own and the next session probes; when the provider is
// back, its end is told once.
func TestOutageToldOnce(t *testing.T) {
	c := outage3(t)
	probe, next := outageSessions[0], outageSessions[1]
	delivered := func(n int) {
		c.eventually("the probe's continuation delivered", func() bool { return count(c.log.all(), "store sent") == n })
	}
	for n, wait := range []time.Duration{30 * time.Second, 90 * time.Second} {
		delivered(n + 1)
		c.writeIn(probe, prompt("c"+string(rune('a'+n)), coreText), apiError("f"+string(rune('a'+n)), 529, "API Error: 529 overloaded"))
		c.eventually("the next attempt planned", func() bool { return c.stateOf(probe) == "retrying" })
		c.advance(wait)
		c.eventually("the probe's attempt", func() bool { return c.sent(probe) == n+2 })
	}
	c.eventually("told once", func() bool { return len(c.notices()) == 1 })
	if n := c.notices()[0]; !strings.HasPrefix(n, "Anthropic failing since ") || !strings.HasSuffix(n, "· 2 sessions waiting") {
		t.Errorf("notice %q", n)
	}
	delivered(3)
	c.writeIn(probe, prompt("cz", coreText), apiError("fz", 529, "API Error: 529 overloaded"))
	c.eventually("the probe gave up", func() bool { return c.stateOf(probe) == "gave_up" })
	c.eventually("the next probe's attempt", func() bool { return c.sent(next) == 1 })
	c.writeIn(next, prompt("n1", coreText), endTurn("nd"))
	c.eventually("the last one continued", func() bool { return c.sent(outageSessions[2]) == 1 })
	c.eventually("its end told", func() bool { return len(c.notices()) == 2 })
	if n := c.notices(); n[1] != "Anthropic is back; 2 sessions continued" {
		t.Errorf("notices %q", n)
	}
	// One entry for the outage, replaced at its end; the probe's give-up
	// under it.
	var own, under []string
	for _, e := range c.entries() {
		switch {
		case e.Outage == "":
		case e.Session == "":
			own = append(own, e.What)
		default:
			under = append(under, e.Session)
		}
	}
	if len(own) != 1 || !strings.HasPrefix(own[0], "Anthropic is back; 2 sessions continued: ") || len(under) != 1 || under[0] != probe {
		t.Errorf("the outage's entries %q, its sessions' %q", own, under)
	}
	for _, s := range outageSessions {
		if n := c.sent(s); n > 3 {
			t.Errorf("%s: %d continuations", s, n)
		}
	}
}

// A single session's failure is no outage: its ladder runs as ever.
func TestOneSessionNoOutage(t *testing.T) {
	c := newCore(t)
	c.start()
	c.deadTurn(1)
	c.advance(10 * time.Second)
	c.eventually("its attempt", func() bool { return c.sent(coreSession) == 1 })
	if os := c.storedOutages(); len(os) != 0 {
		t.Errorf("outages %+v", os)
	}
}

// An outage survives a crash: restarted, the waiting sessions still wait
// and are continued when the probe's turn completes.
func TestOutageSurvivesACrash(t *testing.T) {
	c := outage3(t)
	c.stop()
	c.log.calls = nil
	c.start()
	c.advance(time.Minute)
	if c.sent(outageSessions[1]) != 0 || c.stateOf(outageSessions[1]) != "waiting_provider" {
		t.Fatalf("after a restart a waiting session is %s with %d continuations", c.stateOf(outageSessions[1]), c.sent(outageSessions[1]))
	}
	c.writeIn(outageSessions[0], prompt("c1", coreText), endTurn("d1"))
	c.eventually("the waiting continued", func() bool { return c.sent(outageSessions[1]) == 1 })
	c.advance(outage.Spacing)
	c.eventually("the waiting continued", func() bool { return c.sent(outageSessions[2]) == 1 })
}

// Continue all sends the waiting sessions' attempts now, Spacing apart,
// while the outage goes on.
func TestContinueAll(t *testing.T) {
	c := outage3(t)
	if n, err := c.daemon.ContinueAll("openai"); err != nil || n != 0 {
		t.Fatalf("another provider: %d, %v", n, err)
	}
	if got := c.status().Outages; len(got) != 1 || got[0].Waiting != 2 || got[0].Title != "Anthropic" {
		t.Fatalf("status outages %+v", got)
	}
	n, err := c.daemon.ContinueAll("")
	if err != nil || n != 2 {
		t.Fatalf("continued %d, %v", n, err)
	}
	c.eventually("the first continued", func() bool { return c.sent(outageSessions[1]) == 1 })
	if c.sent(outageSessions[2]) != 0 {
		t.Fatal("both continued in the same second")
	}
	c.advance(outage.Spacing)
	c.eventually("the second continued", func() bool { return c.sent(outageSessions[2]) == 1 })
	if got := c.status().Outages; len(got) != 1 {
		t.Errorf("the outage ended: %+v", got)
	}
}

// A probe whose continuation cannot be delivered, before the outage costs
// anything, is told on its own as ever: never a silent give-up; so is the
// next probe, whose continuation cannot be delivered either.
func TestOutageUndeliveredProbeIsTold(t *testing.T) {
	c := newCore(t)
	c.terminal.refuse = true
	c.start()
	for _, s := range outageSessions[:2] {
		c.writeIn(s, prompt("p"+s[:1], "task"), apiError("e"+s[:1], 529, "API Error: 529 overloaded"))
		c.eventually("a retry planned", func() bool { return c.stateOf(s) == "retrying" })
	}
	c.advance(10 * time.Second)
	c.eventually("both probes told", func() bool { return len(c.notices()) >= 2 })
	if n := c.notices(); len(n) != 2 || n[0] != "Claude Code needs attention" || n[1] != n[0] {
		t.Errorf("notices %q", n)
	}
}
