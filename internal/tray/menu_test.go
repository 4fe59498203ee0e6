package tray

import (
	"bytes"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"nudge/internal/status"
)

func at(t time.Time) *time.Time { return &t }

func TestStateWords(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.Local)
	for _, c := range []struct {
		s       status.Session
		want    string
		ticking bool
	}{
		{status.Session{State: "working", StateWords: "working"}, "working", false},
		{status.Session{State: "finished", StateWords: "finished"}, "finished", false},
		{status.Session{State: "failed", StateWords: "failed"}, "failed", false},
		{status.Session{State: "retrying", StateWords: "retrying", RetryAt: at(now.Add(12*time.Second + 300*time.Millisecond))}, "retrying in 13 s", true},
		{status.Session{State: "retrying", StateWords: "retrying", RetryAt: at(now.Add(-time.Second))}, "retrying now", true},
		{status.Session{State: "waiting_box", StateWords: "waiting for a box"}, "waiting for a box", false},
		{status.Session{State: "waiting_you", StateWords: "waiting for you", Note: "waiting: you have unsent text in the prompt"}, "waiting: you have unsent text in the prompt", false},
		{status.Session{State: "waiting_you", StateWords: "waiting for you"}, "waiting for you", false},
		{status.Session{State: "waiting_provider", StateWords: "waiting for the provider", Note: "waiting for Anthropic"}, "waiting for Anthropic", false},
		{status.Session{State: "usage_limit", StateWords: "usage limit", ResetAt: at(now.Add(3 * time.Hour))}, "usage limit until 13:00", false},
		{status.Session{State: "usage_limit", StateWords: "usage limit", ResetAt: at(now.Add(48 * time.Hour))}, "usage limit until Wed 2 Dec 10:00", false},
		{status.Session{State: "usage_limit", StateWords: "usage limit"}, "usage limit", false},
		{status.Session{State: "needs_signin", StateWords: "needs sign-in"}, "needs sign-in", false},
		{status.Session{State: "gave_up", StateWords: "gave up"}, "gave up", false},
		{status.Session{State: "", StateWords: "watching"}, "watching", false},
		{status.Session{State: "some_new_state", StateWords: "some new state"}, "some new state", false},
	} {
		got, ticking := stateWords(c.s, now)
		if got != c.want || ticking != c.ticking {
			t.Errorf("%s: got %q (ticking %v), want %q (ticking %v)", c.s.State, got, ticking, c.want, c.ticking)
		}
	}
}

func labels(p picture) string {
	var ls []string
	for _, l := range p.lines {
		if l.separator {
			ls = append(ls, "--")
			continue
		}
		ls = append(ls, l.label)
	}
	return strings.Join(ls, "|")
}

func TestDraw(t *testing.T) {
	now := time.Now()
	on := &status.Settings{RetryEnabled: true}

	// Before the daemon knows its settings the toggles cannot be clicked.
	p := draw(status.Status{}, -1, now)
	if p.lines[0].enabled || p.lines[1].enabled {
		t.Fatalf("toggles enabled without settings: %+v", p.lines[:2])
	}

	p = draw(status.Status{Settings: on}, 0, now)
	if want := "Retry after API errors|Continue after usage limit|--|No sessions yet|--|Open Inbox…|Pause|--|Quit"; labels(p) != want {
		t.Fatalf("labels:\n got %s\nwant %s", labels(p), want)
	}
	if p.look != status.AllFine || p.tooltip != "nudge: all fine" || !p.lines[0].checked || p.lines[1].checked {
		t.Fatalf("idle picture: %+v", p)
	}

	busy := status.Status{Settings: &status.Settings{RetryEnabled: true, Paused: true}, Sessions: []status.Session{
		{Agent: "claude", Project: "/home/dev/shop", State: "retrying", StateWords: "retrying", RetryAt: at(now.Add(5 * time.Second))},
		{Agent: "codex", Session: "0123456789abcdef", State: "working", StateWords: "working"},
	}}
	p = draw(busy, 0, now)
	if !strings.Contains(labels(p), "|shop (claude): retrying in 5 s|01234567 (codex): working|") || !strings.Contains(labels(p), "|Resume|") {
		t.Fatalf("labels: %s", labels(p))
	}
	if p.look != status.Retrying || !p.ticking || p.tooltip != "nudge: retrying 1 session (paused)" {
		t.Fatalf("busy picture: look %v ticking %v tooltip %q", p.look, p.ticking, p.tooltip)
	}

	// Unread entries and a session that needs sign-in call for attention,
	// over a retry in progress.
	p = draw(busy, 2, now)
	if p.look != status.NeedsAttention || !strings.Contains(labels(p), "|Open Inbox… (2 unread)|") || p.tooltip != "nudge: needs attention: 2 unread (paused)" {
		t.Fatalf("unread picture: look %v tooltip %q labels %s", p.look, p.tooltip, labels(p))
	}
	busy.Sessions = append(busy.Sessions, status.Session{Agent: "kimi", Project: "/x/api", State: "needs_signin", StateWords: "needs sign-in"})
	if p = draw(busy, 0, now); p.look != status.NeedsAttention {
		t.Fatalf("needs sign-in: look %v", p.look)
	}
}

// A session that waits for the person shows, under it, what they were told
// (the words of the Inbox entry); other notes stay out of the menu.
func TestDrawShowsWhatThePersonWasTold(t *testing.T) {
	const told = "Claude Code needs you to sign in again: run `claude /login` (or fix ANTHROPIC_API_KEY), then type continue in the session."
	st := status.Status{Settings: &status.Settings{}, Sessions: []status.Session{
		{Agent: "claude", Project: "/p/shop", State: "needs_signin", StateWords: "needs sign-in", Note: told, Told: told},
		{Agent: "codex", Project: "/p/api", State: "retrying", StateWords: "retrying", Note: "attempt 1 of 3"},
		{Agent: "kimi", Project: "/p/web", State: "gave_up", StateWords: "gave up", Told: "nudge could not continue Kimi Code: its process has exited or its terminal now runs something else; resume the session and type continue."},
	}}
	got := labels(draw(st, 0, time.Now()))
	if !strings.Contains(got, "|shop (claude): needs sign-in|    "+told+"|api (codex): retrying|web (kimi): gave up|    nudge could not continue Kimi Code") {
		t.Fatalf("labels: %s", got)
	}
	if strings.Contains(got, "attempt 1 of 3") {
		t.Errorf("a retry's note in the menu: %s", got)
	}
}

// A store that refuses writes is said at the top of the menu and calls for
// attention.
func TestDrawCannotSave(t *testing.T) {
	now := time.Now()
	st := status.Status{Settings: &status.Settings{RetryEnabled: true},
		Daemon:   &status.Daemon{StoreFailing: &status.StoreFailing{Since: now, Error: "database or disk is full (13)", NextTry: now.Add(4 * time.Second)}},
		Sessions: []status.Session{{Agent: "claude", Project: "/p", State: "retrying", StateWords: "retrying"}}}
	p := draw(st, 0, now)
	if !strings.Contains(labels(p), "|--|Cannot save (database or disk is full (13)); retrying, nothing is lost|p (claude): retrying|") {
		t.Fatalf("labels: %s", labels(p))
	}
	if p.look != status.NeedsAttention || p.tooltip != "nudge: needs attention: cannot save" {
		t.Fatalf("look %v tooltip %q", p.look, p.tooltip)
	}
	st.Daemon.StoreFailing = nil
	if p = draw(st, 0, now); strings.Contains(labels(p), "Cannot save") || p.look != status.Retrying {
		t.Fatalf("after the store works again: look %v labels %s", p.look, labels(p))
	}
}

// The icon looks as status.Overall judges, the one judgement the Inbox
// window shows too.
func TestDrawLooksAsStatusJudges(t *testing.T) {
	now := time.Now()
	failing := &status.Daemon{StoreFailing: &status.StoreFailing{Since: now, Error: "disk full"}}
	for _, c := range []struct {
		st     status.Status
		unread int
		want   status.Look
	}{
		{status.Status{}, -1, status.AllFine},
		{status.Status{Sessions: []status.Session{{State: "gave_up"}, {State: "failed"}}}, 0, status.AllFine},
		{status.Status{Sessions: []status.Session{{State: "waiting_box"}}}, 0, status.Retrying},
		{status.Status{Sessions: []status.Session{{State: "retrying"}}}, 1, status.NeedsAttention},
		{status.Status{Sessions: []status.Session{{State: "needs_signin"}}}, 0, status.NeedsAttention},
		{status.Status{Daemon: failing}, 0, status.NeedsAttention},
	} {
		if got := draw(c.st, c.unread, now).look; got != c.want || got != status.Overall(c.st, c.unread) {
			t.Errorf("%+v with %d unread: the icon looks %q, status judges %q, want %q", c.st, c.unread, got, status.Overall(c.st, c.unread), c.want)
		}
	}
}

func TestDrawManySessions(t *testing.T) {
	st := status.Status{Settings: &status.Settings{}}
	for range maxSessions + 3 {
		st.Sessions = append(st.Sessions, status.Session{Agent: "claude", Project: "/p", State: "finished", StateWords: "finished"})
	}
	p := draw(st, 0, time.Now())
	if n := strings.Count(labels(p), "p (claude): finished"); n != maxSessions {
		t.Fatalf("%d session lines, want %d", n, maxSessions)
	}
	if !strings.Contains(labels(p), "|and 3 more|") {
		t.Fatalf("labels: %s", labels(p))
	}
}

func TestSameShape(t *testing.T) {
	st := status.Status{Settings: &status.Settings{}, Sessions: []status.Session{{Agent: "claude", State: "working", StateWords: "working"}}}
	a := draw(st, 0, time.Now())
	st.Sessions[0].State = "finished"
	st.Settings.Paused = true
	b := draw(st, 3, time.Now())
	if !sameShape(a.lines, b.lines) {
		t.Fatal("a change of words and ticks rebuilt the menu")
	}
	st.Sessions = append(st.Sessions, status.Session{Agent: "codex", State: "working", StateWords: "working"})
	if sameShape(a.lines, draw(st, 0, time.Now()).lines) {
		t.Fatal("a new session did not change the menu's shape")
	}
}

func TestIcons(t *testing.T) {
	seen := map[string]status.Look{}
	for l, ic := range icons() {
		for kind, b := range map[string][]byte{"template": ic.template, "colour": ic.colour} {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("look %s %s: %v", l, kind, err)
			}
			if img.Bounds().Dx() != iconSize || img.Bounds().Dy() != iconSize {
				t.Fatalf("look %s %s: %v", l, kind, img.Bounds())
			}
			opaque := 0
			for y := range iconSize {
				for x := range iconSize {
					r, g, b, a := img.At(x, y).RGBA()
					if kind == "template" && (r|g|b) != 0 {
						t.Fatalf("look %s template: pixel (%d,%d) is not black", l, x, y)
					}
					if a > 0xf000 {
						opaque++
					}
				}
			}
			if opaque < iconSize*iconSize/4 {
				t.Fatalf("look %s %s: only %d opaque pixels", l, kind, opaque)
			}
			if other, dup := seen[string(b)]; dup {
				t.Fatalf("looks %s and %s share a %s picture", l, other, kind)
			}
			seen[string(b)] = l
		}
	}
}

// While an outage lasts the menu says so in one line.
func TestDrawOutage(t *testing.T) {
	since := time.Date(2026, 12, 4, 10, 42, 0, 0, time.Local)
	st := status.Status{Settings: &status.Settings{RetryEnabled: true},
		Outages: []status.Outage{{Provider: "anthropic", Title: "Anthropic", Since: since, Sessions: 6, Waiting: 5}}}
	p := draw(st, 0, since)
	if got := labels(p); !strings.Contains(got, "|Anthropic failing since 10:42 · 5 sessions waiting|Continue the waiting sessions now|") {
		t.Errorf("menu %s", got)
	}
	if !slices.ContainsFunc(p.lines, func(l line) bool { return l.click == clickWaiting && l.enabled }) {
		t.Error("the waiting sessions cannot be continued from the menu")
	}
	st.Outages[0].Waiting = 0
	if got := labels(draw(st, 0, since)); strings.Contains(got, labelWaiting) {
		t.Errorf("with none waiting the menu offers to continue them: %s", got)
	}
}
