package retry

import (
	"errors"
	"testing"
	"time"

	"nudge/internal/classify"
)

const limitText = "You've hit your 5-hour limit · resets 12pm (UTC)"

// reset is the agent's reported reset time in these tests.
var reset = t0.Add(3 * time.Hour)

func limitHit(opts ...func(*classify.Event)) call {
	return fail(classify.UsageLimit, limitText, opts...)
}

// autoContinue is the agent's record that it armed its own continuation
// (docs/agents/claude.md §8.2 "Usage limit reached · set to continue automatically").
var autoContinue = event(classify.UsageLimited, func(ev *classify.Event) {
	ev.Failure = &classify.Failure{Class: classify.UsageLimit, ResetAt: reset}
	ev.AutoContinue = true
})

// What the person is told of the limit in these tests, by what happens at
// its end (advice.UsageLimit).
const (
	limitOff = "testagent reached its usage limit, which resets at 12:00 UTC, Mon 30 Nov; " +
		"type continue in the session after it, or turn on Continue after usage limit."
	limitAt1 = "testagent reached its usage limit, which resets at 12:00 UTC, Mon 30 Nov; nudge continues the session at 12:01."
	limitAt3 = "testagent reached its usage limit, which resets at 12:00 UTC, Mon 30 Nov; nudge continues the session at 12:03."
)

// told is the decision and Inbox entry of a usage limit told as words.
func told(words, errorText string) []string {
	return []string{"decide[told]: told the person: " + words, `entry "` + words + `" usage_limit "` + errorText + `" attempts=0`}
}

func lines(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func continueSettings() Settings {
	set := testSettings()
	set.ContinueAfterUsageLimit = true
	return set
}

func TestUsageLimitIsNeverRetried(t *testing.T) {
	run(t, testSettings(), []step{
		{0, limitHit(resetAt(reset)), lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitOff, limitText),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
		{10 * time.Second, tick, nil},
		// the provider-error retry yields while the limit is in force
		{10 * time.Minute, fail(pe, err529), []string{
			"decide: provider error while the usage limit is in force: not retried (the retry yields to the limit)",
			"decide[told]: told the person: the turn failed with a provider error during a usage limit; not retried",
			`entry "the turn failed with a provider error during a usage limit; not retried" provider_error "API Error: 529 Overloaded" attempts=0`,
		}},
		{4 * time.Hour, tick, nil},
	})
}

func TestUsageLimitCancelsPendingRetry(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{5 * time.Second, limitHit(resetAt(reset)), []string{
			"decide: usage limit: pending attempt 1 cancelled (the retry yields to the limit)",
			"decide: usage limit: continue after usage limit is off; nothing will be sent",
			"decide[told]: told the person: " + limitOff,
			`entry "` + limitOff + `" usage_limit "` + limitText + `" attempts=0`,
			"state usage_limit until +3h (" + limitOff + ")",
		}},
		{10 * time.Second, tick, nil},
	})
}

func TestContinueAfterUsageLimit(t *testing.T) {
	run(t, continueSettings(), []step{
		{0, limitHit(resetAt(reset)), lines(
			[]string{"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)", "wake +3h1m"},
			told(limitAt1, limitText),
			[]string{"state usage_limit until +3h (" + limitAt1 + ")"},
		)},
		{3*time.Hour + time.Minute, tick, []string{
			"decide: sending attempt 1 (usage_limit): nothing holds it",
			`inject #1 "go on"`,
		}},
		{3*time.Hour + time.Minute, delivered(1, nil), []string{
			"decide: attempt 1 delivered; waiting for its turn to end",
			"state working (continued after the usage limit)",
		}},
		{3*time.Hour + time.Minute + time.Second, typed(testMessage), echo1},
		{4 * time.Hour, tick, nil},
		// hitting the same limit again: no second continuation for that reset
		{4 * time.Hour, limitHit(resetAt(reset)), lines(
			[]string{"decide: usage limit: nudge already continued once after the reset at 2026-11-30T12:00:00Z"},
			told(limitOff, limitText),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
	})
}

func TestContinueAfterUsageLimitYieldsToAutoContinue(t *testing.T) {
	run(t, continueSettings(), []step{
		{0, limitHit(resetAt(reset)), lines(
			[]string{"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)", "wake +3h1m"},
			told(limitAt1, limitText),
			[]string{"state usage_limit until +3h (" + limitAt1 + ")"},
		)},
		{time.Second, autoContinue, []string{
			"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:03:00Z (reset + 3m, leaving the agent's own auto-continue its chance)",
			"wake +3h3m",
			"state usage_limit until +3h (" + limitAt3 + ")",
		}},
		{2 * time.Second, autoContinue, nil}, // the same news again changes nothing
		{3*time.Hour + time.Minute, tick, []string{"wake +3h3m"}},
		{3*time.Hour + 3*time.Minute, tick, []string{
			"decide: sending attempt 1 (usage_limit): nothing holds it",
			`inject #1 "go on"`,
		}},
	})
}

func TestAgentContinuingCancelsUsageLimitContinuation(t *testing.T) {
	for _, c := range []struct {
		name string
		ev   call
		want string
	}{
		{"turn started", event(classify.TurnStarted), "decide: the agent is working (turn_started): pending attempt 1 cancelled"},
		{"activity", event(classify.AgentActivity), "decide: the agent is working (agent_activity): pending attempt 1 cancelled"},
		{"person", typed("carry on"), "decide: the person typed a message: pending attempt 1 cancelled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, continueSettings(), []step{
				{0, limitHit(resetAt(reset)), lines(
					[]string{"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)", "wake +3h1m"},
					told(limitAt1, limitText),
					[]string{"state usage_limit until +3h (" + limitAt1 + ")"},
				)},
				{3*time.Hour + 20*time.Second, c.ev, []string{c.want, "state working"}},
				{3*time.Hour + time.Minute, tick, nil},
			})
		})
	}
}

func TestUsageLimitWithoutResetTimeIsNeverContinued(t *testing.T) {
	const limitNoReset = "testagent reached its usage limit and did not say when it resets; type continue in the session once it has."
	run(t, continueSettings(), []step{
		{0, limitHit(), lines(
			[]string{"decide: usage limit without a reset time: nudge never guesses one; nothing will be sent"},
			told(limitNoReset, limitText),
			[]string{"state usage_limit (" + limitNoReset + ")"},
		)},
		{24 * time.Hour, tick, nil},
	})
}

func TestUsageLimitReportedByAgentWaiting(t *testing.T) {
	// OpenCode sleeping until a quota resets: no dead turn, repeated reports.
	sleeping := event(classify.UsageLimited, func(ev *classify.Event) {
		ev.Failure = &classify.Failure{Class: classify.UsageLimit, Message: "usage limit", ResetAt: reset}
	})
	run(t, testSettings(), []step{
		{0, sleeping, lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitOff, "usage limit"),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
		{time.Minute, sleeping, nil},
	})
}

func TestSwitchingUsageLimitContinuation(t *testing.T) {
	run(t, testSettings(), []step{
		{0, limitHit(resetAt(reset)), lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitOff, limitText),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
		{time.Hour, reconfigure(func(s *Settings) { s.ContinueAfterUsageLimit = true }), []string{
			"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)",
			"wake +3h1m",
			"state usage_limit until +3h (" + limitAt1 + ")",
		}},
		{2 * time.Hour, reconfigure(func(s *Settings) { s.ContinueAfterUsageLimit = false }), []string{
			"decide: continue after usage limit is off: the continuation is cancelled",
			"state usage_limit until +3h (" + limitOff + ")",
		}},
		{3*time.Hour + time.Minute, tick, nil},
	})
}

func TestUsageLimitContinuationWaitsForBox(t *testing.T) {
	run(t, continueSettings(), []step{
		{0, limitHit(resetAt(reset)), lines(
			[]string{"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)", "wake +3h1m"},
			told(limitAt1, limitText),
			[]string{"state usage_limit until +3h (" + limitAt1 + ")"},
		)},
		{time.Hour, event(classify.BoxOpened, process(classify.StatusWaiting, "input needed")), nil},
		{3*time.Hour + time.Minute, tick, []string{
			"decide: attempt 1 is due but a box is open (input needed): next check at 2026-11-30T12:01:10Z",
			"state waiting_box until +3h1m10s (a box is open (input needed))",
			"wake +3h1m10s",
		}},
		{3*time.Hour + time.Minute + 5*time.Second, event(classify.BoxClosed, process(classify.StatusIdle, "")), []string{
			"decide: nothing holds attempt 1 any more: checking again now",
			"state usage_limit until +3h (testagent reached its usage limit, which resets at 12:00 UTC, Mon 30 Nov; nudge continues the session at 12:01.)",
			"wake +3h1m5s",
		}},
		{3*time.Hour + time.Minute + 5*time.Second, tick, []string{
			"decide: sending attempt 1 (usage_limit): nothing holds it",
			`inject #1 "go on"`,
		}},
	})
}

// A limit shows twice when an agent reports its exhausted window and the
// turn it killed separately (Muse's host answers): it is told once in
// either order. The dead turn's error text, when it comes second, goes to
// the timeline and stays with the limit for whatever is told about it later.
const (
	windowText = "Muse usage window exhausted until 2026-11-30T12:00:00Z"
	deadText   = "provider returned 503"
)

// limitNoReset is what the person is told of a limit without a reset time.
const limitNoReset = "testagent reached its usage limit and did not say when it resets; type continue in the session once it has."

var window = event(classify.UsageLimited, func(ev *classify.Event) {
	ev.Failure = &classify.Failure{Class: classify.UsageLimit, Message: windowText, ResetAt: reset}
})

func TestUsageLimitReportThenDeadTurnIsToldOnce(t *testing.T) {
	const undelivered = "nudge could not continue testagent: typing into its terminal failed; type continue there yourself."
	run(t, continueSettings(), []step{
		{0, window, lines(
			[]string{"decide[scheduled]: usage limit: one continuation at 2026-11-30T12:01:00Z (reset + 1m)", "wake +3h1m"},
			told(limitAt1, windowText),
			[]string{"state usage_limit until +3h (" + limitAt1 + ")"},
		)},
		{2 * time.Second, fail(classify.UsageLimit, deadText, resetAt(reset)), []string{
			`decide: usage limit already told: the dead turn is the same limit, not told again (its error: "` + deadText + `")`,
		}},
		{3 * time.Second, window, nil},
		{3*time.Hour + time.Minute, tick, []string{
			"decide: sending attempt 1 (usage_limit): nothing holds it",
			`inject #1 "go on"`,
		}},
		// what is told later carries the dead turn's text
		{3*time.Hour + time.Minute, delivered(1, errors.New("no terminal")), []string{
			"decide[told]: told the person: " + undelivered,
			`entry "` + undelivered + `" usage_limit "` + deadText + `" attempts=1`,
			`notify "testagent needs attention" "/home/dev/project: ` + undelivered + ` — ` + deadText + `"`,
			"state gave_up (" + undelivered + ")",
		}},
	})
}

func TestUsageLimitDeadTurnThenReportIsToldOnce(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(classify.UsageLimit, deadText, resetAt(reset)), lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitOff, deadText),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
		{2 * time.Second, window, nil},
		{time.Minute, window, nil},
	})
}

// A dead turn without a reset time keeps the told limit's; one after the
// told limit's reset passed is a new limit.
func TestUsageLimitDeadTurnAfterReportKeepsResetUntilItPasses(t *testing.T) {
	run(t, testSettings(), []step{
		{0, window, lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitOff, windowText),
			[]string{"state usage_limit until +3h (" + limitOff + ")"},
		)},
		{time.Second, fail(classify.UsageLimit, deadText), []string{
			`decide: usage limit already told: the dead turn is the same limit, not told again (its error: "` + deadText + `")`,
		}},
		{3*time.Hour + time.Second, fail(classify.UsageLimit, deadText), lines(
			[]string{"decide: usage limit: continue after usage limit is off; nothing will be sent"},
			told(limitNoReset, deadText),
			[]string{"state usage_limit (" + limitNoReset + ")"},
		)},
	})
}

// The turn the window killed may start after the window was told: the
// agent's work in between does not make its dead turn a new limit, and
// what was told survives a restart. A person's new message starts afresh:
// the dead turn that answers it is told.
func TestUsageLimitToldOnceAcrossTheTurnItKilled(t *testing.T) {
	limitState := []string{"decide: usage limit: continue after usage limit is off; nothing will be sent",
		"state usage_limit until +3h (" + limitOff + ")"}
	s := run(t, testSettings(), []step{
		{0, window, lines(limitState[:1], told(limitOff, windowText), limitState[1:])},
	})
	set := testSettings()
	s = restore(t, s)
	runOn(t, s, &set, []step{
		{time.Second, event(classify.TurnStarted), []string{"state working"}},
		{2 * time.Second, fail(classify.UsageLimit, deadText, resetAt(reset)), lines([]string{
			`decide: usage limit already told: the dead turn is the same limit, not told again (its error: "` + deadText + `")`,
		}, limitState)},
		{3 * time.Second, event(classify.AgentActivity), []string{"state working"}},
		{4 * time.Second, window, lines([]string{
			"decide: usage limit already told: the agent reports the same limit again",
		}, limitState)},
		{time.Hour, typed("try again"), []string{"state working"}},
		{time.Hour + time.Second, fail(classify.UsageLimit, deadText, resetAt(reset)), lines(limitState[:1], told(limitOff, deadText), limitState[1:])},
	})
}
