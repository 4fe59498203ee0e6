package retry

// Provider-error episodes: a continuation after each wait, never more than
// the cap, then the person is told (docs/behaviour.md §3).

import (
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// episode is a run of provider errors not broken by a completed turn or a
// person's message: the "same error" whose attempts are counted.
type episode struct {
	ID       string           `json:"id"`                 // names the episode in the attempt ledger
	Original classify.Failure `json:"original"`           // the error that started the episode
	Latest   classify.Failure `json:"latest"`             // the most recent error
	FailedAt time.Time        `json:"failed_at,omitzero"` // the latest dead turn's record time
	Attempts int              `json:"attempts"`           // continuations issued
	Over     bool             `json:"over,omitempty"`     // nudge gave up and told the person
}

// providerError handles a dead turn classified provider_error (docs/behaviour.md §3).
func (s *Session) providerError(f classify.Failure, recorded, now time.Time, set Settings) {
	if s.rateLimited(now) {
		s.decide("provider error while the usage limit is in force: not retried (the retry yields to the limit)")
		s.entry("the turn failed with a provider error during a usage limit; not retried", f, nil, 0)
		return
	}
	s.limit = nil
	if !set.Enabled {
		if p := s.pending; p != nil && p.For == forRetry {
			s.retryOff()
		}
		s.episode = nil
		s.decide("retry is off: one Inbox entry, no continuation")
		s.entry("the turn failed with a provider error; retry is off", f, nil, 0)
		s.show(Failed, time.Time{}, "")
		return
	}
	if s.backlog && s.pending == nil && (recorded.IsZero() || now.Sub(recorded) > BacklogRecent) {
		s.overtake()
		s.decide("provider error written while nudge was not running, more than %s ago: told, not retried", advice.Span(BacklogRecent))
		s.entry("the turn failed with a provider error while nudge was not running; too long ago to retry", f, nil, 0)
		s.show(Failed, time.Time{}, "")
		return
	}
	e := s.episode
	if e == nil {
		first := recorded
		if first.IsZero() {
			first = now
		}
		e = &episode{ID: "retry " + first.UTC().Format(time.RFC3339Nano), Original: f}
		s.episode = e
	}
	e.Latest, e.FailedAt = f, recorded
	if e.Over {
		s.decide("provider error after nudge gave up on this episode: no more attempts")
		s.entry("the turn failed again after nudge gave up; not retried", f, nil, e.Attempts)
		return
	}
	if p := s.pending; p != nil {
		s.decide("another provider error while attempt %d is pending: keeping its time", p.Attempt)
		return
	}
	if e.Attempts >= len(set.Delays) {
		last := ""
		if l := latest(e); l != nil {
			last = l.Excerpt()
		}
		s.tell(advice.GaveUp(s.key.Agent, e.Attempts, last), forRetry, e.Attempts)
		return
	}
	delay := set.Delays[e.Attempts]
	s.pending = &pending{For: forRetry, Attempt: e.Attempts + 1, At: now.Add(delay), Backlog: s.backlog}
	s.step(StepScheduled, "provider error: attempt %d of %d in %s", e.Attempts+1, len(set.Delays), advice.Span(delay))
	s.showPending(set)
	s.wake(s.pending.At)
}

// retryOff cancels the pending retry because retry was switched off; its
// dead turn gets its one Inbox entry (docs/behaviour.md §4).
func (s *Session) retryOff() {
	e := s.episode
	s.decide("retry is off: pending attempt %d cancelled", s.pending.Attempt)
	s.pending, s.episode = nil, nil
	s.entry("the turn failed with a provider error; retry is off", e.Original, latest(e), e.Attempts)
	s.show(Failed, time.Time{}, "")
}

// latest is the episode's latest error when its text differs from the original.
func latest(e *episode) *classify.Failure {
	if e.Latest.Message == e.Original.Message {
		return nil
	}
	l := e.Latest
	return &l
}
