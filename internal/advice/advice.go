// Package advice is what nudge tells the person when it cannot help by
// itself: a continuation it could not type, a sign-in, a usage limit, a turn
// that kept failing. Each message is one plain sentence that ends with the
// one action that fixes it, and it is the same text everywhere: the Inbox
// entry, the notification, the menu, the log and `nudge explain`
// (docs/behaviour.md §6).
package advice

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"nudge/internal/classify"
)

// Cause is why a continuation was not typed.
type Cause int

// The causes, each with its own sentence and action.
const (
	// TypingFailed: the terminal refused the keys.
	TypingFailed Cause = iota
	// Unreachable: no process of the session was found in a terminal nudge
	// can type into.
	Unreachable
	// NoScreen: the agent's screen must be checked before typing, and its
	// terminal cannot show it.
	NoScreen
	// Ambiguous: several processes could be the session's.
	Ambiguous
	// Gone: the agent process exited, or its place now holds another.
	Gone
	// NotIdle: at the last moment the agent was not idle at an empty prompt.
	NotIdle
	// BoxOpen: a box stayed open for Why.For.
	BoxOpen
	// Busy: the agent stayed busy for Why.For.
	Busy
	// Refused: the session id in the records is not of the agent's shape.
	Refused
	// Stopped: nudge stopped before it typed anything.
	Stopped
	// Repeated: the attempt was made once already.
	Repeated
	// Cut: nudge stopped while typing; the text may sit in the prompt.
	Cut
	// CutBeforeEnter: nudge stopped after pasting and before Enter; the
	// place's screen shows the text in the prompt.
	CutBeforeEnter
	// TooLate: nudge was not running when the continuation was due.
	TooLate
	// Draft: the agent's prompt held text of the person's (or could not
	// be seen) for Why.For.
	Draft
	// Leftover: the prompt held nudge's own earlier continuation, unsent,
	// for Why.For.
	Leftover
	// Present: the person was typing in the session's terminal (for
	// Why.For, or as nudge was about to type).
	Present
	// CopyMode: the pane stayed in the person's mode (Why.Box names it)
	// for Why.For.
	CopyMode
	// NotAlone: nudge pasted its continuation, but the prompt then held
	// the person's text too, so it did not press Enter.
	NotAlone
)

// Waiting is the state note of a continuation that a person's use of the
// session's terminal holds (docs/behaviour.md §3 "The person at the
// keyboard"), as the timeline, the menu and `nudge explain` show it.
func Waiting(c Cause) string {
	switch c {
	case Draft:
		return "waiting: you have unsent text in the prompt"
	case Leftover:
		return "waiting: nudge's earlier continuation sits unsent in the prompt"
	case Present:
		return "waiting: you are typing in the session's terminal"
	}
	return "waiting: the pane is in copy mode"
}

// Why says why one continuation was not typed. It is an error, so that it
// travels as a delivery's outcome.
type Why struct {
	Cause Cause
	PID   int           // the agent process, when known
	Place string        // where it was, or was to be, typed: "tmux /tmp/tmux-0/default %3"
	Box   string        // BoxOpen: which box, when known
	For   time.Duration // BoxOpen, Busy: how long
	Due   time.Time     // TooLate: when it was due
	// Held: nothing was typed and the person is using the place now; the
	// continuation waits and is tried again (Draft, Leftover, Present,
	// CopyMode).
	Held bool
}

// Error is the sentence for an agent not named.
func (w Why) Error() string { return Undelivered("", w) }

// WhyOf is the Why that err carries; any other error is a terminal that
// refused the keys.
func WhyOf(err error) Why {
	var w Why
	if errors.As(err, &w) {
		return w
	}
	return Why{Cause: TypingFailed}
}

// Undelivered says that nudge did not continue agent's session, why, and
// what the person does now.
func Undelivered(agent string, w Why) string {
	a := named(agent)
	place := "its terminal"
	if w.Place != "" {
		place = w.Place
	}
	wrapFix := "start " + a.title + " as `nudge wrap -- " + a.command + "` or in tmux or screen so that nudge can next time"
	switch w.Cause {
	case Unreachable:
		if w.PID > 0 {
			return fmt.Sprintf("nudge could not continue %s: its process %d runs in no terminal nudge can type into; type continue there yourself, and %s.", a.title, w.PID, wrapFix)
		}
		return fmt.Sprintf("nudge could not continue %s: it found no running process of this session in a terminal it can type into; continue the session yourself, and %s.", a.title, wrapFix)
	case NoScreen:
		return fmt.Sprintf("nudge could not continue %s: its terminal at %s cannot show nudge the screen it checks before typing; type continue there yourself, and start %s as `nudge wrap -- %s` or in tmux so that nudge can next time.", a.title, place, a.title, a.command)
	case Ambiguous:
		return fmt.Sprintf("nudge could not continue %s: several %s processes in this folder could be this session, and nudge never guesses; type continue in the right one yourself.", a.title, a.title)
	case Gone:
		return fmt.Sprintf("nudge could not continue %s: its process has exited or its terminal now runs something else; resume the session and type continue.", a.title)
	case NotIdle:
		return fmt.Sprintf("nudge did not continue %s: it was not idle at an empty prompt when the continuation was due; type continue there yourself once it is.", a.title)
	case BoxOpen:
		box := ""
		if w.Box != "" {
			box = ", " + w.Box + ","
		}
		return fmt.Sprintf("nudge did not continue %s: a box%s stayed open for %s; answer it, then type continue in the session.", a.title, box, Span(w.For))
	case Busy:
		return fmt.Sprintf("nudge did not continue %s: it was not idle for %s; type continue in the session once it is.", a.title, Span(w.For))
	case Refused:
		return fmt.Sprintf("nudge did not continue %s: the session id in its records is not one %s writes, so nudge does not use it; continue the session yourself.", a.title, a.title)
	case Stopped:
		return fmt.Sprintf("nudge stopped before typing its continuation into %s and does not send it again; type continue in the session yourself.", a.title)
	case Repeated:
		return fmt.Sprintf("nudge had made this continuation into %s once already and does not send it twice; type continue in the session yourself if it is still stopped.", a.title)
	case CutBeforeEnter:
		return fmt.Sprintf("nudge stopped after pasting its continuation into %s at %s and before pressing Enter, so it sits unsent in the prompt there and nudge types nothing over it; press Enter to send it, or clear the prompt before you type.", a.title, place)
	case Cut:
		return fmt.Sprintf("nudge stopped while typing its continuation into %s at %s, so it may sit unsent in the prompt there and nudge types nothing over it; check the prompt before you type.", a.title, place)
	case TooLate:
		return fmt.Sprintf("nudge was not running when its continuation into %s was due at %s, and does not send it this late; type continue in the session yourself.", a.title, Clock(w.Due))
	case Draft:
		return fmt.Sprintf("nudge did not continue %s: its prompt at %s held text of yours, unsent, for %s, and nudge never types over it; send or clear it, then type continue in the session.", a.title, place, Span(w.For))
	case Leftover:
		return fmt.Sprintf("nudge did not continue %s: its own earlier continuation sat unsent in the prompt at %s for %s, and nudge never sends it blindly; press Enter there to send it, or clear the prompt and type continue.", a.title, place, Span(w.For))
	case Present:
		if w.For == 0 {
			return fmt.Sprintf("nudge did not continue %s: you started typing in its terminal at %s as nudge was about to, so it typed nothing; type continue in the session when you are done.", a.title, place)
		}
		return fmt.Sprintf("nudge did not continue %s: you kept typing in its terminal at %s for %s; type continue in the session when you are done.", a.title, place, Span(w.For))
	case CopyMode:
		return fmt.Sprintf("nudge did not continue %s: its pane at %s stayed in copy mode for %s, and nudge never takes a pane out of your mode; leave it, then type continue in the session.", a.title, place, Span(w.For))
	case NotAlone:
		return fmt.Sprintf("nudge pasted its continuation into the prompt of %s at %s but did not press Enter: the prompt also held text you typed meanwhile. Your text is untouched and nudge's sentence sits next to it; delete that sentence, then send the prompt as you like.", a.title, place)
	}
	return fmt.Sprintf("nudge could not continue %s: typing into %s failed; type continue there yourself.", a.title, place)
}

// SignIn says that agent needs the person to sign in again, and how: the
// agent's own sign-in hint (classify.Agent.LoginHint), else hint.
func SignIn(agent, hint string) string {
	a := named(agent)
	how := a.login
	if how == "" {
		how = hint
	}
	if how == "" {
		how = "sign in to " + a.title
	}
	return fmt.Sprintf("%s needs you to sign in again: %s, then type continue in the session.", a.title, strings.TrimSuffix(how, "."))
}

// Limit is a usage limit and what happens at its end.
type Limit struct {
	Reset time.Time // when the agent says it resets; zero: it did not say
	// ContinueAt is when nudge's one continuation is due (zero: none).
	ContinueAt time.Time
	// Paused: that continuation waits until nudge is resumed.
	Paused bool
	// AgentContinues: the agent armed its own continuation.
	AgentContinues bool
}

// UsageLimit says that agent reached its usage limit, until when, and what
// happens after.
func UsageLimit(agent string, l Limit) string {
	a := named(agent)
	if l.Reset.IsZero() {
		return fmt.Sprintf("%s reached its usage limit and did not say when it resets; type continue in the session once it has.", a.title)
	}
	var next string
	switch {
	case !l.ContinueAt.IsZero() && l.Paused:
		next = "nudge continues the session after it once nudge is resumed"
	case !l.ContinueAt.IsZero():
		next = "nudge continues the session at " + clockAfter(l.ContinueAt, l.Reset)
	case l.AgentContinues:
		next = a.title + " continues by itself after it"
	default:
		next = "type continue in the session after it, or turn on Continue after usage limit"
	}
	return fmt.Sprintf("%s reached its usage limit, which resets at %s; %s.", a.title, Clock(l.Reset), next)
}

// GaveUp says that agent's turn kept failing after attempts continuations,
// the last time with latest ("" when it is the error the Inbox entry
// shows).
func GaveUp(agent string, attempts int, latest string) string {
	a := named(agent)
	tries := "1 continuation"
	if attempts != 1 {
		tries = fmt.Sprintf("%d continuations", attempts)
	}
	with := ""
	if latest != "" {
		with = ", the last time with: " + latest
	}
	return fmt.Sprintf("%s's turn failed again after %s%s; type continue in the session once the provider works again.", a.title, tries, with)
}

// Clock is an instant as the messages write it, in local time:
// "15:04 CET, Mon 30 Nov".
func Clock(t time.Time) string { return t.Local().Format("15:04 MST, Mon 2 Jan") }

// clockAfter is t as Clock writes it, without the day when it is ref's.
func clockAfter(t, ref time.Time) string {
	if y, m, d := t.Local().Date(); y == ref.Local().Year() && m == ref.Local().Month() && d == ref.Local().Day() {
		return t.Local().Format("15:04")
	}
	return Clock(t)
}

// agentWords are an agent's name, command and sign-in hint as the
// messages use them.
type agentWords struct{ title, command, login string }

// Title is the agent's name as people write it ("Claude Code").
func Title(agent string) string { return named(agent).title }

// named looks agent up in the registry; an unknown one is called by its key.
func named(agent string) agentWords {
	if agent == "" {
		return agentWords{title: "the agent", command: "<agent>"}
	}
	w := agentWords{title: agent, command: agent}
	if a, ok := classify.Lookup(agent); ok {
		w.login = a.LoginHint
		if a.Title != "" {
			w.title = a.Title
		}
		if len(a.Executables) > 0 {
			w.command = a.Executables[0]
		}
	}
	return w
}

// Span writes a duration without trailing zero units ("1h", "5m", "1m30s").
func Span(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
