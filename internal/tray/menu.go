package tray

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"nudge/internal/safetext"
	"nudge/internal/status"
)

// What a click on a line means.
const (
	clickRetry    = "retry"
	clickContinue = "continue"
	clickInbox    = "inbox"
	clickPause    = "pause"
	clickWaiting  = "continue_waiting"
	clickQuit     = "quit"
)

// Menu labels (docs/behaviour.md §4, §6).
const (
	labelRetry    = "Retry after API errors"
	labelContinue = "Continue after usage limit"
	labelInbox    = "Open Inbox…"
	labelPause    = "Pause"
	labelResume   = "Resume"
	labelQuit     = "Quit"
	labelWaiting  = "Continue the waiting sessions now"
)

// title is the icon's title.
const title = "nudge"

// maxSessions bounds the session lines; the rest are summed up in one.
const maxSessions = 10

// line is one line of the menu.
type line struct {
	click     string // clickRetry, …; empty for a line that only informs
	label     string
	checkbox  bool
	checked   bool
	enabled   bool
	separator bool
}

// picture is the icon and menu for one moment.
type picture struct {
	settings status.Settings // the toggles as shown
	look     status.Look
	tooltip  string
	lines    []line
	ticking  bool // a countdown is shown: draw again in a second
}

// sameShape reports whether b has a's lines in the same places, so the
// menu can be updated in place instead of rebuilt.
func sameShape(a, b []line) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].click != b[i].click || a[i].checkbox != b[i].checkbox || a[i].separator != b[i].separator {
			return false
		}
	}
	return true
}

// draw turns the daemon's picture into the icon and menu. unread < 0 means
// the Inbox could not be counted.
func draw(st status.Status, unread int, now time.Time) picture {
	p := picture{look: status.Overall(st, unread)}
	set := st.Settings
	known := set != nil
	if set == nil {
		set = &status.Settings{}
	}
	p.lines = append(p.lines,
		line{click: clickRetry, label: labelRetry, checkbox: true, checked: set.RetryEnabled, enabled: known},
		line{click: clickContinue, label: labelContinue, checkbox: true, checked: set.ContinueAfterUsageLimit, enabled: known},
		line{separator: true},
	)
	cannotSave := st.CannotSave()
	if cannotSave {
		p.lines = append(p.lines, line{label: "Cannot save (" + short(st.Daemon.StoreFailing.Error, 48) + "); retrying, nothing is lost"})
	}
	waiting := 0
	for _, o := range st.Outages {
		p.lines = append(p.lines, line{label: safetext.Line(o.Line())})
		waiting += o.Waiting
	}
	if waiting > 0 {
		p.lines = append(p.lines, line{click: clickWaiting, label: labelWaiting, enabled: true})
	}
	if len(st.Sessions) == 0 {
		p.lines = append(p.lines, line{label: "No sessions yet"})
	}
	busy := 0
	for i, s := range st.Sessions {
		if s.Busy() {
			busy++
		}
		if i < maxSessions {
			words, ticking := stateWords(s, now)
			p.ticking = p.ticking || ticking
			p.lines = append(p.lines, line{label: sessionName(s) + ": " + words})
			if told, ok := toldLine(s); ok {
				p.lines = append(p.lines, told)
			}
		}
	}
	if n := len(st.Sessions) - maxSessions; n > 0 {
		p.lines = append(p.lines, line{label: fmt.Sprintf("and %d more", n)})
	}
	inbox := labelInbox
	if unread > 0 {
		inbox = fmt.Sprintf("%s (%d unread)", labelInbox, unread)
	}
	pause := line{click: clickPause, label: labelPause, enabled: known}
	if set.Paused {
		pause.label = labelResume
	}
	p.lines = append(p.lines,
		line{separator: true},
		line{click: clickInbox, label: inbox, enabled: true},
		pause,
		line{separator: true},
		line{click: clickQuit, label: labelQuit, enabled: true},
	)
	p.settings = *set
	p.tooltip = tooltip(p.look, busy, unread, set.Paused, cannotSave)
	return p
}

// short cuts s to at most n runes, marking the cut.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func tooltip(l status.Look, busy, unread int, paused, cannotSave bool) string {
	var s string
	switch {
	case cannotSave:
		s = "needs attention: cannot save"
	case l == status.NeedsAttention && unread > 0:
		s = fmt.Sprintf("%s: %d unread", l.Words(), unread)
	case l == status.Retrying:
		s = fmt.Sprintf("%s %d %s", l.Words(), busy, plural(busy, "session", "sessions"))
	default:
		s = l.Words()
	}
	if paused {
		s += " (paused)"
	}
	return title + ": " + s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sessionName names a session by its project folder and agent.
func sessionName(s status.Session) string {
	name := filepath.Base(s.Project)
	if s.Project == "" {
		name = s.Session
		if len(name) > 8 {
			name = name[:8]
		}
	}
	return fmt.Sprintf("%s (%s)", safetext.Line(name), s.Agent)
}

// stateWords says a session's state in words (docs/behaviour.md §6), and whether the
// words count down.
func stateWords(s status.Session, now time.Time) (string, bool) {
	switch {
	case s.State == "retrying" && s.RetryAt != nil:
		secs := int(math.Ceil(s.RetryAt.Sub(now).Seconds()))
		if secs <= 0 {
			return "retrying now", true
		}
		return fmt.Sprintf("retrying in %d s", secs), true
	case s.State == "usage_limit" && s.ResetAt != nil:
		return "usage limit until " + clock(*s.ResetAt, now), false
	case (s.State == "waiting_you" || s.State == "waiting_provider") && s.Note != "":
		// "waiting: you have unsent text in the prompt", "waiting for Anthropic"
		return safetext.Line(s.Note), false
	}
	return s.StateWords, false
}

// toldLine is the line under a session that waits for the person: what
// they were told, in the words of the Inbox entry and the notification.
func toldLine(s status.Session) (line, bool) {
	if s.Told == "" {
		return line{}, false
	}
	return line{label: "    " + safetext.Line(s.Told)}, true
}

// clock is t in local time: the hour today, with the day otherwise.
func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Mon 2 Jan 15:04")
}
