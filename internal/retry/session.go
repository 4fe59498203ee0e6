// Package retry is the per-session state machine of docs/behaviour.md §3–5: a session's
// events and the time go in, actions (continue, tell, wait) come out.
package retry

// The Session, what it shows, and its entry points: the calls the daemon
// makes for events, wakes, delivery reports and settings.

import (
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// BacklogRecent is how old a provider error written while nudge was not
// running may be and still be retried; so late may a continuation due while
// nudge was not running still be sent (docs/durability.md).
const BacklogRecent = 10 * time.Minute

// Session is the retry state of one session. It is not safe for concurrent
// use. It is stored as JSON and restored after a start (stored.go;
// docs/durability.md).
//
// Its state keeps these invariants; every call keeps them, and restoring
// enforces them (Session.invariants):
//   - An episode has issued 0 to MaxAttempts continuations.
//   - There is never both a provider-error episode and a usage limit: the
//     retry yields to the limit (docs/behaviour.md §5).
//   - A pending continuation answers what is there: for a retry, an episode
//     nudge has not given up, whose next attempt it is; for a usage limit,
//     a limit nudge has not continued after, as attempt 1. It has a due
//     time; only while something holds it, it has a gap between checks,
//     and that gap is positive.
//   - The last continuation issued was for a retry or a usage limit, its
//     attempt 1 to MaxAttempts.
//   - The state shown is a State, or empty before the first event.
//   - The ending of a turn is named only while that turn has ended.
type Session struct {
	key     Key
	project string // the session's working directory, as last reported

	// What the person sees (SetState): the state, its time and its note.
	state State
	until time.Time
	note  string

	episode *episode // the provider-error episode
	limit   *limit   // the usage limit in force
	pending *pending // the one continuation waiting to be sent
	sent    *sent    // the last continuation issued

	boxOpen     bool
	boxName     string
	agentStatus string // last known registry status; empty: no registry info

	// lastContinuedReset is the reset time nudge last continued after: it
	// continues at most once per reset.
	lastContinuedReset time.Time
	// toldReset is the reset time of the last usage limit told, until a
	// person's message or the end of a turn other than by this limit: the
	// same limit shown again after the agent's own work (the turn it
	// killed) is not told again (docs/behaviour.md §5).
	toldReset time.Time
	// turnEnded: the current turn ended (done or failed) and no new one
	// started since; endedTurn is the ID of that ending when it names its
	// turn (classify.Event.TurnScoped).
	turnEnded bool
	endedTurn string

	out     []Action
	backlog bool // the event being observed was written while nudge was not running
}

// NewSession starts the state of the session named key.
func NewSession(key Key) *Session { return &Session{key: key} }

// State returns the state the person sees and its time (SetState.Until).
func (s *Session) State() (State, time.Time) { return s.state, s.until }

// Note returns the short explanation of the current state.
func (s *Session) Note() string { return s.note }

// NextWake returns when the machine next needs a Tick, if ever: the daemon
// arms its timer with it after restoring the session.
func (s *Session) NextWake() (time.Time, bool) {
	if p := s.pending; p != nil && !p.Paused {
		return p.At, true
	}
	return time.Time{}, false
}

// Echoed tells whether the last continuation issued is attempt and the
// agent recorded it as a user message: it reached the agent.
func (s *Session) Echoed(attempt int) bool {
	c := s.sent
	return c != nil && c.Attempt == attempt && c.Echoed
}

// Repeats tells whether ev only repeats what the session knows already: the
// end of a turn that has ended. An ending that names its turn repeats the
// ending of the same turn; one that does not, read by a reader that began in
// the middle of its file before it read the start of any turn (fresh: after
// a restart, Claude Code's second record ending a turn), repeats whatever
// ending came before. The daemon neither stores nor observes such an event.
func (s *Session) Repeats(ev classify.Event, fresh bool) bool {
	switch {
	case ev.Kind != classify.TurnDone || !s.turnEnded:
		return false
	case ev.TurnScoped():
		return ev.ID == s.endedTurn
	}
	return fresh
}

// Observe takes one new event from the session's records, detected at now.
func (s *Session) Observe(ev classify.Event, now time.Time, set Settings) []Action {
	s.observe(ev, now, set.normalized())
	return s.flush()
}

// ObserveBacklog takes one event written while nudge was not running (read
// by the first scan after a start; docs/durability.md). A dead turn among
// them is told as usual, except a provider error: it is retried only when
// its record is at most BacklogRecent old and the records after it do not
// show the session going on; otherwise it gets one Inbox entry instead.
func (s *Session) ObserveBacklog(ev classify.Event, now time.Time, set Settings) []Action {
	p, e := s.pending, s.episode
	s.backlog = true
	s.observe(ev, now, set.normalized())
	s.backlog = false
	if p != nil && p.Backlog && s.pending != p && e != nil && !e.Over {
		s.decide("the session went on while nudge was not running: the dead turn is told, not retried")
		s.entry("the turn failed with a provider error while nudge was not running; the session went on since, so it was not retried", e.Original, latest(e), e.Attempts)
		if s.state == Retrying {
			s.show(Failed, time.Time{}, "")
		}
	}
	return s.flush()
}

// Restored looks at the session after a start: a continuation that fell due
// more than BacklogRecent ago, while nudge was not running, is not sent so
// late; it is told.
func (s *Session) Restored(now time.Time, set Settings) []Action {
	if p := s.pending; p != nil && !p.Paused && now.Sub(p.At) > BacklogRecent {
		s.tell(advice.Undelivered(s.key.Agent, advice.Why{Cause: advice.TooLate, Due: p.At}), p.For, s.attempts(p.For))
	}
	return s.flush()
}

// Tick acts on a Wake that came due. The daemon has just re-read the
// session's records (docs/behaviour.md §3 step 2), so the picture is current.
func (s *Session) Tick(now time.Time, set Settings) []Action {
	set = set.normalized()
	p := s.pending
	switch {
	case p == nil:
	case now.Before(p.At):
		s.wake(p.At)
	case set.Paused:
		if !p.Paused {
			s.pause(p, set)
		}
	case p.For == forRetry && !set.Enabled:
		s.retryOff()
	case p.For == forUsageLimit && !set.ContinueAfterUsageLimit:
		s.limitOff()
	case s.agentStatus == classify.StatusExited:
		s.tell(advice.Undelivered(s.key.Agent, advice.Why{Cause: advice.Gone}), p.For, s.attempts(p.For))
	default:
		if b, ok := s.blocker(); ok {
			s.hold(b, now, set)
		} else {
			s.inject(now, set)
		}
	}
	return s.flush()
}

// Delivered takes the outcome of the Inject for attempt: err is nil when the
// continuation was typed, else why it could not be (an advice.Why; any other
// error is a terminal that refused the keys).
func (s *Session) Delivered(attempt int, err error, now time.Time, set Settings) []Action {
	c := s.sent
	switch {
	case c == nil || c.Attempt != attempt || c.Reported:
		s.decide("delivery report for attempt %d ignored: no such continuation is outstanding", attempt)
	case !s.current(c):
		c.Reported = true
		s.decide("attempt %d: delivery reported after the session moved on; nothing to do", attempt)
	case err != nil && advice.WhyOf(err).Held && c.From != nil:
		s.unsend(c, advice.WhyOf(err), now, set.normalized())
	case err != nil:
		c.Reported = true
		s.tell(advice.Undelivered(s.key.Agent, advice.WhyOf(err)), c.For, attempt)
	default:
		c.Reported = true
		s.decide("attempt %d delivered; waiting for its turn to end", attempt)
		s.show(Working, time.Time{}, sentNote(c, set.normalized()))
	}
	return s.flush()
}

// Interrupted takes the outcome of attempt when a stop cut it while it was
// being typed: its text may sit unsent in the agent's prompt, so the person
// is told whatever the session did since (why says where), and the retry
// of that dead turn is over: nothing is typed over it.
func (s *Session) Interrupted(attempt int, why advice.Why, now time.Time, set Settings) []Action {
	what := advice.Undelivered(s.key.Agent, why)
	c := s.sent
	if c != nil && c.Attempt == attempt && !c.Reported && s.current(c) {
		c.Reported = true
		s.tell(what, c.For, attempt)
		return s.flush()
	}
	if c != nil && c.Attempt == attempt {
		c.Reported = true
	}
	s.decide("attempt %d was cut while typing, after the session moved on: telling the person", attempt)
	s.needsAttention(what, classify.Failure{}, nil, attempt)
	return s.flush()
}

// pause holds the pending continuation p while nudge is paused.
func (s *Session) pause(p *pending, set Settings) {
	p.Paused = true
	s.decide("paused: attempt %d waits until nudge is unpaused", p.Attempt)
	s.showPending(set)
}

// Reconfigure applies changed settings at once: switching retry off cancels
// a pending retry (its dead turn gets its one Inbox entry); switching it on
// does not bring back old failures.
func (s *Session) Reconfigure(now time.Time, set Settings) []Action {
	set = set.normalized()
	if p := s.pending; p != nil {
		switch {
		case p.For == forRetry && !set.Enabled:
			s.retryOff()
		case p.For == forUsageLimit && !set.ContinueAfterUsageLimit:
			s.limitOff()
		case set.Paused && !p.Paused:
			s.pause(p, set)
		case !set.Paused && p.Paused:
			p.Paused, p.At = false, maxTime(now, p.At)
			s.decide("unpaused: attempt %d is re-checked at %s", p.Attempt, stamp(p.At))
			s.showPending(set)
			s.wake(p.At)
		}
	} else if set.ContinueAfterUsageLimit && s.limit != nil && !s.limit.Fired {
		s.planLimit(set)
		s.showLimit()
	}
	return s.flush()
}
