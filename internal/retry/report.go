package retry

// What the machine reports: the state the person sees, Inbox entries,
// notifications, decisions for the log and `nudge explain`, and wakes.

import (
	"fmt"
	"strings"
	"time"

	"nudge/internal/classify"
)

// show reports a new state; an unchanged state is not reported again.
func (s *Session) show(st State, until time.Time, note string) {
	if s.state == st && s.until.Equal(until) && s.note == note {
		return
	}
	s.state, s.until, s.note = st, until, note
	s.emit(SetState{Key: s.key, State: st, Until: until, Note: note})
}

// entry tells the person what in one Inbox entry, and says so in a decision.
func (s *Session) entry(what string, f classify.Failure, last *classify.Failure, attempts int) {
	s.step(StepTold, "told the person: %s", what)
	s.emit(Entry{Key: s.key, Project: s.project, What: what, Failure: f, Latest: last, Attempts: attempts})
}

func (s *Session) notify(title, what string, f classify.Failure) {
	body := what
	if m := f.Excerpt(); m != "" && !strings.Contains(what, m) {
		body += " — " + m
	}
	if s.project != "" {
		body = s.project + ": " + body
	}
	s.emit(Notify{Key: s.key, Project: s.project, Title: title, Body: body})
}

func (s *Session) decide(format string, args ...any) { s.step("", format, args...) }

// step records a decision that changes the session's course.
func (s *Session) step(step Step, format string, args ...any) {
	s.emit(Decision{Key: s.key, What: fmt.Sprintf(format, args...), Step: step})
}

func (s *Session) wake(at time.Time) { s.emit(Wake{Key: s.key, At: at}) }

func (s *Session) emit(a Action) { s.out = append(s.out, a) }

func (s *Session) flush() []Action {
	out := s.out
	s.out = nil
	return out
}

// stamp formats an instant for decisions and notes.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
