package retry

import (
	"testing"
	"time"
)

func await(next time.Duration) call {
	return call{name: "await", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Await("Anthropic", t0.Add(next), *set)
	}}
}

func release(at time.Duration) call {
	return call{name: "release", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Release(t0.Add(at), "Anthropic is back", *set)
	}}
}

// A retry that waits for its provider spends no attempt, however long it
// waits; released, it is decided as any attempt.
func TestAwaitSpendsNoAttempt(t *testing.T) {
	run(t, testSettings(), steps([]step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, await(70 * time.Second), []string{
			"decide: attempt 1 waits for Anthropic: another session probes it",
			"state waiting_provider (waiting for Anthropic)",
			"wake +1m10s",
		}},
		{70 * time.Second, await(130 * time.Second), []string{"wake +2m10s"}},
		{100 * time.Second, tick, []string{"wake +2m10s"}}, // early: re-armed only
		{110 * time.Second, release(115 * time.Second), []string{
			"decide[scheduled]: Anthropic is back: attempt 1 is due at 2026-11-30T09:01:55Z",
			"state retrying until +1m55s (attempt 1 of 3)",
			"wake +1m55s",
		}},
		{115 * time.Second, tick, send1},
	}))
}

// Paused, a release waits for the resume; nothing pending, both do nothing.
func TestAwaitAndReleaseOnlyHoldARetry(t *testing.T) {
	run(t, testSettings(), []step{
		{0, await(time.Minute), nil},
		{0, release(time.Minute), nil},
		{0, fail(pe, err500), schedule1},
		{time.Second, reconfigure(func(s *Settings) { s.Paused = true }), []string{
			"decide: paused: attempt 1 waits until nudge is unpaused",
			"state retrying until +10s (attempt 1 of 3, paused)",
		}},
		{2 * time.Second, release(5 * time.Second), nil},
	})
}
