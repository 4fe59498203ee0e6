package retry

import "nudge/internal/classify"

// Failing is the latest dead turn of the session's provider-error episode,
// the provider it failed against with it (docs/behaviour.md §9); the zero
// Failure when there is no episode.
func (s *Session) Failing() classify.Failure {
	if s.episode == nil {
		return classify.Failure{}
	}
	return s.episode.Latest
}
