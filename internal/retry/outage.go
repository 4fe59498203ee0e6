package retry

// A session during a provider outage (docs/behaviour.md §9): its pending
// attempt waits while another session probes the provider, and is made due
// when the provider is back. internal/outage decides; these calls obey.

import (
	"time"

	"nudge/internal/classify"
)

// Failing is the latest dead turn of the session's provider-error episode,
// the provider it failed against with it; the zero Failure when there is
// no episode.
func (s *Session) Failing() classify.Failure {
	if s.episode == nil {
		return classify.Failure{}
	}
	return s.episode.Latest
}

// Await keeps the pending retry, due or not, from being sent while the
// provider it failed against is out and another session probes it: no
// attempt is spent; the session shows "waiting for <provider>" and is
// looked at again at next.
func (s *Session) Await(provider string, next time.Time, set Settings) []Action {
	p := s.pending
	if p == nil || p.For != forRetry {
		return s.flush()
	}
	p.At = next
	if s.state != WaitingProvider {
		s.decide("attempt %d waits for %s: another session probes it", p.Attempt, provider)
	}
	s.show(WaitingProvider, time.Time{}, "waiting for "+provider)
	s.wake(next)
	return s.flush()
}

// Release makes the pending retry due at at: the provider is back, this
// session is the probe now, or the person asked. It is decided then as
// any attempt (Tick).
func (s *Session) Release(at time.Time, why string, set Settings) []Action {
	p := s.pending
	if p == nil || p.For != forRetry || p.Paused {
		return s.flush()
	}
	p.At = at
	s.step(StepScheduled, "%s: attempt %d is due at %s", why, p.Attempt, stamp(at))
	s.showPending(set.normalized())
	s.wake(at)
	return s.flush()
}

// RetryDue tells whether a retry's attempt is due at now (and nudge is not
// paused): the moment to ask whether it must wait for its provider.
func (s *Session) RetryDue(now time.Time) bool {
	p := s.pending
	return p != nil && p.For == forRetry && !p.Paused && !now.Before(p.At)
}

// RetryPending tells whether a retry's attempt is pending.
func (s *Session) RetryPending() bool { return s.pending != nil && s.pending.For == forRetry }
