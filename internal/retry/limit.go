package retry

// Usage limits: told once, and one continuation after the agent's reset
// time when the person asks for it (docs/behaviour.md §5).

import (
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// limit is a usage limit in force (docs/behaviour.md §5).
type limit struct {
	Failure      classify.Failure `json:"failure"`
	AutoContinue bool             `json:"auto_continue,omitempty"` // the agent armed its own continuation
	Fired        bool             `json:"fired,omitempty"`         // nudge's one continuation was issued (or given up)
}

// usageLimit handles a usage limit, from a dead turn or from the agent's
// own report that it waits (docs/behaviour.md §5). A limit gets one Inbox entry in
// whatever order its signs come (docs/behaviour.md §5): a sign of it is the
// limit already told when that limit still stands (no work and no
// continuation since; for a dead turn, its reset not passed either), or
// when, after only the agent's own work, it names the reset time of the
// last limit told, that reset is still ahead and nudge has not continued
// after it. A person's message starts afresh. A dead turn that comes after
// the limit was told keeps its error text in the timeline and in the
// limit. No notification: nothing is broken and nobody can act before the
// reset, and the menu shows "usage limit until T".
func (s *Session) usageLimit(f classify.Failure, auto, deadTurn bool, now time.Time, set Settings) {
	if p := s.pending; p != nil && p.For == forRetry {
		s.pending = nil
		s.decide("usage limit: pending attempt %d cancelled (the retry yields to the limit)", p.Attempt)
	}
	if s.episode != nil {
		s.episode = nil
		if s.sent != nil {
			s.sent.Overtaken = true
		}
	}
	l := s.limit
	standing := l != nil && !l.Fired && (!deadTurn || s.rateLimited(now))
	told := !f.ResetAt.IsZero() && f.ResetAt.Equal(s.toldReset) && now.Before(f.ResetAt) && s.lastContinuedReset.Before(f.ResetAt)
	if !standing {
		l = &limit{Failure: f, AutoContinue: auto}
		s.limit = l
	}
	before := *l
	if standing {
		switch {
		case deadTurn:
			l.Failure = f
			if f.ResetAt.IsZero() {
				l.Failure.ResetAt = before.Failure.ResetAt
			}
		case !f.ResetAt.IsZero():
			l.Failure.ResetAt = f.ResetAt
		}
		l.AutoContinue = l.AutoContinue || auto
	}
	fresh := !standing && !told
	switch {
	case fresh:
	case deadTurn:
		s.decide("usage limit already told: the dead turn is the same limit, not told again (its error: %q)", f.Excerpt())
	case !standing:
		s.decide("usage limit already told: the agent reports the same limit again")
	}
	if !standing || before.AutoContinue != l.AutoContinue || !before.Failure.ResetAt.Equal(l.Failure.ResetAt) {
		s.planLimit(set)
	}
	if fresh {
		s.entry(s.limitWords(), l.Failure, nil, 0)
		s.toldReset = f.ResetAt
	}
	s.showLimit()
}

// planLimit schedules the one "Continue after usage limit" continuation,
// never before the agent's own reset time plus the margin, never on a
// guessed time.
func (s *Session) planLimit(set Settings) {
	l := s.limit
	reset := l.Failure.ResetAt
	switch {
	case l.Fired:
	case !set.ContinueAfterUsageLimit:
		s.decide("usage limit: continue after usage limit is off; nothing will be sent")
	case reset.IsZero():
		s.decide("usage limit without a reset time: nudge never guesses one; nothing will be sent")
	case !reset.After(s.lastContinuedReset):
		s.decide("usage limit: nudge already continued once after the reset at %s", stamp(reset))
	default:
		margin, why := set.UsageLimitMargin, ""
		if l.AutoContinue {
			margin, why = set.UsageLimitMarginAutoContinue, ", leaving the agent's own auto-continue its chance"
		}
		at := reset.Add(margin)
		if p := s.pending; p != nil && p.At.Equal(at) {
			return
		}
		s.pending = &pending{For: forUsageLimit, Attempt: 1, At: at}
		s.step(StepScheduled, "usage limit: one continuation at %s (reset + %s%s)", stamp(at), advice.Span(margin), why)
		s.wake(at)
	}
}

// limitOff cancels the pending usage-limit continuation.
func (s *Session) limitOff() {
	s.pending = nil
	s.decide("continue after usage limit is off: the continuation is cancelled")
	s.showLimit()
}

// rateLimited tells whether a usage limit is in force: its reset time has
// not passed (or is unknown), or nudge's continuation after it is pending.
func (s *Session) rateLimited(now time.Time) bool {
	l := s.limit
	if l == nil {
		return false
	}
	if p := s.pending; p != nil && p.For == forUsageLimit {
		return true
	}
	return l.Failure.ResetAt.IsZero() || now.Before(l.Failure.ResetAt)
}

// showLimit shows "usage limit until <reset>", with what happens after.
func (s *Session) showLimit() {
	s.show(UsageLimit, s.limit.Failure.ResetAt, s.limitWords())
}

// limitWords says the usage limit in force and what happens at its end.
func (s *Session) limitWords() string {
	l := advice.Limit{Reset: s.limit.Failure.ResetAt, AgentContinues: s.limit.AutoContinue}
	if p := s.pending; p != nil && p.For == forUsageLimit {
		l.ContinueAt, l.Paused = p.At, p.Paused
	}
	return advice.UsageLimit(s.key.Agent, l)
}
