package retry

import (
	"errors"
	"fmt"
	"nudge/internal/advice"
	"strings"
	"testing"
	"time"

	"nudge/internal/classify"
)

const pe = classify.ProviderError

// These lines repeat in many scenarios.
var (
	schedule1 = []string{
		"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
		"state retrying until +10s (attempt 1 of 3)",
		"wake +10s",
	}
	send1 = []string{
		"decide: sending attempt 1 (retry): nothing holds it",
		`inject #1 "go on"`,
	}
	delivered1 = []string{
		"decide: attempt 1 delivered; waiting for its turn to end",
		"state working (continuation sent (attempt 1 of 3))",
	}
	echo1 = []string{"decide: user message is nudge's own attempt 1: its turn started"}
)

// attempt1 is a dead turn at 0 and attempt 1 sent, delivered and started at 10 s.
func attempt1() []step {
	return []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, send1},
		{10 * time.Second, delivered(1, nil), delivered1},
		{11 * time.Second, typed(testMessage), echo1},
	}
}

func steps(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestThreeAttemptsThenGiveUp(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{3 * time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +3m30s (attempt 2 of 3)",
			"wake +3m30s",
		}},
		{3*time.Minute + 20*time.Second, tick, []string{"wake +3m30s"}}, // early: re-armed only
		{3*time.Minute + 30*time.Second, tick, []string{
			"decide: sending attempt 2 (retry): nothing holds it",
			`inject #2 "go on"`,
		}},
		{3*time.Minute + 30*time.Second, delivered(2, nil), []string{
			"decide: attempt 2 delivered; waiting for its turn to end",
			"state working (continuation sent (attempt 2 of 3))",
		}},
		// the agent may record the typed text with other white space
		{3*time.Minute + 31*time.Second, typed("  go \n on "), []string{
			"decide: user message is nudge's own attempt 2: its turn started",
		}},
		{6 * time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 3 of 3 in 1m30s",
			"state retrying until +7m30s (attempt 3 of 3)",
			"wake +7m30s",
		}},
		{7*time.Minute + 30*time.Second, tick, []string{
			"decide: sending attempt 3 (retry): nothing holds it",
			`inject #3 "go on"`,
		}},
		{7*time.Minute + 30*time.Second, delivered(3, nil), []string{
			"decide: attempt 3 delivered; waiting for its turn to end",
			"state working (continuation sent (attempt 3 of 3))",
		}},
		{7*time.Minute + 31*time.Second, typed(testMessage), []string{
			"decide: user message is nudge's own attempt 3: its turn started",
		}},
		{10 * time.Minute, fail(pe, err529), gaveUp("testagent's turn failed again after 3 continuations, the last time with: "+err529+
			"; type continue in the session once the provider works again.", 3, err529)},
		// never more attempts in this episode; the dead turn is still recorded
		{11 * time.Minute, fail(pe, err529), []string{
			"decide: provider error after nudge gave up on this episode: no more attempts",
			"decide[told]: told the person: the turn failed again after nudge gave up; not retried",
			`entry "the turn failed again after nudge gave up; not retried" provider_error "API Error: 529 Overloaded" attempts=3`,
		}},
		{20 * time.Minute, tick, nil},
	}))
}

func TestGiveUpSameErrorHasNoLatest(t *testing.T) {
	set := testSettings()
	set.Delays = []time.Duration{5 * time.Second}
	run(t, set, []step{
		{0, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 1 in 5s",
			"state retrying until +5s (attempt 1 of 1)",
			"wake +5s",
		}},
		{5 * time.Second, tick, send1},
		{time.Minute, fail(pe, err500), gaveUp("testagent's turn failed again after 1 continuation; type continue in the session once the provider works again.", 1, "")},
	})
}

// A latest error that is a whole page (a proxy's HTML) is given in part
// in what the person is told (the Inbox entry's "what", the state's note,
// the menu line, the notification); the entry keeps it whole.
func TestGiveUpGivesALongErrorInPart(t *testing.T) {
	set := testSettings()
	set.Delays = []time.Duration{5 * time.Second}
	page := "API Error: 502 <!DOCTYPE html><html><body>" + strings.Repeat("é", 400) + "</body></html>"
	shown := "API Error: 502 <!DOCTYPE html><html><body>" + strings.Repeat("é", 300-42) + "… (" + fmt.Sprint(2*(400-258)+14) + " more bytes)"
	run(t, set, []step{
		{0, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 1 in 5s",
			"state retrying until +5s (attempt 1 of 1)",
			"wake +5s",
		}},
		{5 * time.Second, tick, send1},
		{time.Minute, fail(pe, page), gaveUp("testagent's turn failed again after 1 continuation, the last time with: "+shown+
			"; type continue in the session once the provider works again.", 1, page)},
	})
}

func TestDelaysAreCappedAtThree(t *testing.T) {
	set := testSettings()
	set.Delays = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
	run(t, set, []step{
		{0, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 1s",
			"state retrying until +1s (attempt 1 of 3)",
			"wake +1s",
		}},
	})
}

func TestTimingIsFromDetection(t *testing.T) {
	// A dead turn recorded an hour before nudge saw it still waits 10 s from now.
	run(t, testSettings(), []step{
		{time.Minute, fail(pe, err500, recorded(t0.Add(-time.Hour))), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +1m10s (attempt 1 of 3)",
			"wake +1m10s",
		}},
		{time.Minute + 9*time.Second, tick, []string{"wake +1m10s"}},
		{time.Minute + 10*time.Second, tick, send1},
	})
}

func TestCompletedTurnResetsCounter(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{time.Minute, event(classify.TurnDone), []string{
			"decide[recovered]: turn completed after continuation 1: recovered",
			"state finished",
		}},
		{2 * time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +2m10s (attempt 1 of 3)",
			"wake +2m10s",
		}},
	}))
}

func TestDeliveredAttemptCountsWithoutATurn(t *testing.T) {
	run(t, testSettings(), steps(attempt1()[:3], []step{
		{5 * time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +5m30s (attempt 2 of 3)",
			"wake +5m30s",
		}},
	}))
}

func TestPersonTypingEndsEpisode(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +1m30s (attempt 2 of 3)",
			"wake +1m30s",
		}},
		{time.Minute + 10*time.Second, typed("no, do it the other way"), []string{
			"decide: the person typed a message: pending attempt 2 cancelled",
			"state working",
		}},
		{time.Minute + 30*time.Second, tick, nil},
		{2 * time.Minute, fail(pe, err500), []string{ // a new episode: counter starts over
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +2m10s (attempt 1 of 3)",
			"wake +2m10s",
		}},
	}))
}

func TestSameTextAfterEchoWindowIsAPerson(t *testing.T) {
	run(t, testSettings(), steps(attempt1()[:3], []step{
		// sent at +10s; the window ends at +2m10s
		{2*time.Minute + 11*time.Second, typed(testMessage), []string{
			"decide: the person typed a message: retry episode over, attempt counter reset",
			"state working",
		}},
		{3 * time.Minute, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +3m10s (attempt 1 of 3)",
			"wake +3m10s",
		}},
	}))
}

func TestEchoIsRecognisedOnce(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{12 * time.Second, typed(testMessage), []string{
			"decide: the person typed a message: retry episode over, attempt counter reset",
			"state working",
		}},
	}))
}

func TestAgentWorkingCancelsPendingKeepsCounter(t *testing.T) {
	for _, kind := range []classify.Kind{classify.TurnStarted, classify.AgentActivity, classify.AgentRetrying} {
		t.Run(string(kind), func(t *testing.T) {
			working := "state working"
			if kind == classify.AgentRetrying {
				working = "state working (the agent is retrying by itself)"
			}
			run(t, testSettings(), steps(attempt1(), []step{
				{time.Minute, fail(pe, err529), []string{
					"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
					"state retrying until +1m30s (attempt 2 of 3)",
					"wake +1m30s",
				}},
				{time.Minute + 5*time.Second, event(kind), []string{
					"decide: the agent is working (" + string(kind) + "): pending attempt 2 cancelled",
					working,
				}},
				{time.Minute + 30*time.Second, tick, nil},
				{2 * time.Minute, fail(pe, err529), []string{ // attempt 1 was used: the next is 2
					"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
					"state retrying until +2m30s (attempt 2 of 3)",
					"wake +2m30s",
				}},
			}))
		})
	}
}

func TestActivityOlderThanDeadTurnIsIgnored(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{2 * time.Second, event(classify.AgentActivity, recorded(t0.Add(-5*time.Second))), []string{
			"decide: agent_activity recorded before the dead turn; ignored",
		}},
		{10 * time.Second, tick, send1},
	})
}

func TestBoxHoldsThenGivesUp(t *testing.T) {
	set := testSettings()
	set.BoxFirstCheck, set.BoxMaxGap, set.BoxGiveUp = time.Second, 4*time.Second, 15*time.Second
	check := func(at, next string) []string {
		return []string{
			"decide: attempt 1 is due but a box is open (permission prompt): next check at 2026-11-30T09:00:" + next + "Z",
			"state waiting_box until +" + at + " (a box is open (permission prompt))",
			"wake +" + at,
		}
	}
	run(t, set, []step{
		{0, fail(pe, err500), schedule1},
		{2 * time.Second, event(classify.BoxOpened, process(classify.StatusWaiting, "permission prompt")), nil},
		{10 * time.Second, tick, check("11s", "11")},
		{11 * time.Second, tick, check("13s", "13")},
		{13 * time.Second, tick, check("17s", "17")},
		{17 * time.Second, tick, check("21s", "21")},
		{21 * time.Second, tick, check("25s", "25")}, // capped at first seen + 15 s
		{25 * time.Second, tick, gaveUp("nudge did not continue testagent: a box, permission prompt, stayed open for 15s; answer it, then type continue in the session.", 0, "")},
		{time.Minute, tick, nil},
	})
}

func TestBoxGapsGrowToMax(t *testing.T) {
	// Defaults: 10 s, then doubling to 5 min.
	var s []step
	s = append(s, step{0, fail(pe, err500), schedule1},
		step{time.Second, event(classify.BoxOpened, func(ev *classify.Event) { ev.Box = "question" }), nil})
	at := 10 * time.Second
	for _, gap := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 300 * time.Second, 300 * time.Second} {
		next := at + gap
		s = append(s, step{at, tick, []string{
			"decide: attempt 1 is due but a box is open (question): next check at " + stamp(t0.Add(next)),
			"state waiting_box until " + offset(t0.Add(next)) + " (a box is open (question))",
			"wake " + offset(t0.Add(next)),
		}})
		at = next
	}
	run(t, testSettings(), s)
}

func TestBoxClosedRetriesPromptly(t *testing.T) {
	for name, closed := range map[string]call{
		"hook":     event(classify.BoxClosed),
		"registry": event(classify.BoxClosed, process(classify.StatusIdle, "")),
	} {
		t.Run(name, func(t *testing.T) {
			run(t, testSettings(), []step{
				{0, fail(pe, err500), schedule1},
				{2 * time.Second, event(classify.BoxOpened, process(classify.StatusWaiting, "permission prompt")), nil},
				{10 * time.Second, tick, []string{
					"decide: attempt 1 is due but a box is open (permission prompt): next check at 2026-11-30T09:00:20Z",
					"state waiting_box until +20s (a box is open (permission prompt))",
					"wake +20s",
				}},
				{12 * time.Second, closed, []string{
					"decide: nothing holds attempt 1 any more: checking again now",
					"state retrying until +12s (attempt 1 of 3)",
					"wake +12s",
				}},
				{12 * time.Second, tick, send1},
				{20 * time.Second, tick, nil},
			})
		})
	}
}

func TestNotIdleHoldsUntilIdle(t *testing.T) {
	run(t, testSettings(), []step{
		// busy from before the dead turn: the registry has not caught up
		{0, event(classify.TurnStarted, process(classify.StatusBusy, "")), []string{"state working"}},
		{time.Second, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +11s (attempt 1 of 3)",
			"wake +11s",
		}},
		{11 * time.Second, tick, []string{
			`decide: attempt 1 is due but the agent is not idle (status "busy"): next check at 2026-11-30T09:00:21Z`,
			`state retrying until +21s (the agent is not idle (status "busy"))`,
			"wake +21s",
		}},
		{15 * time.Second, event(classify.AgentIdle, process(classify.StatusIdle, "")), []string{
			"decide: nothing holds attempt 1 any more: checking again now",
			"state retrying until +15s (attempt 1 of 3)",
			"wake +15s",
		}},
		{15 * time.Second, tick, send1},
	})
}

func TestStaleRegistryStatusIsIgnored(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{time.Second, event(classify.AgentActivity, process(classify.StatusBusy, ""), recorded(t0.Add(-10*time.Second))), []string{
			`decide: registry status "busy" is older than the dead turn; ignored`,
			"decide: agent_activity recorded before the dead turn; ignored",
		}},
		{10 * time.Second, tick, send1},
	})
}

func TestBusyAfterDeadTurnCancels(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{3 * time.Second, event(classify.AgentActivity, process(classify.StatusBusy, "")), []string{
			`decide: the agent's registry says it is busy: pending attempt 1 cancelled`,
			"state working",
		}},
		{10 * time.Second, tick, nil},
	})
}

func TestProcessGone(t *testing.T) {
	gone := gaveUp("nudge could not continue testagent: its process has exited or its terminal now runs something else; resume the session and type continue.", 0, "")
	t.Run("while pending", func(t *testing.T) {
		run(t, testSettings(), []step{
			{0, fail(pe, err500), schedule1},
			{5 * time.Second, event(classify.AgentIdle, process(classify.StatusExited, "")), gone},
			{10 * time.Second, tick, nil},
		})
	})
	t.Run("before the dead turn", func(t *testing.T) {
		run(t, testSettings(), []step{
			{0, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
			{0, fail(pe, err500), schedule1},
			{10 * time.Second, tick, gone},
		})
	})
}

func TestProcessGoneMidTurnIsToldOnce(t *testing.T) {
	run(t, testSettings(), []step{
		{0, event(classify.TurnStarted, process(classify.StatusBusy, "")), []string{"state working"}},
		{5 * time.Second, event(classify.AgentIdle, process(classify.StatusExited, "")), []string{
			"decide: the agent process exited with its turn open: told once, not retried",
			"decide[told]: told the person: the agent stopped in the middle of a turn; not retried",
			`entry "the agent stopped in the middle of a turn; not retried" unknown "the agent process exited while its turn was still open; it recorded no error" attempts=0`,
			"state failed (stopped mid-turn)",
		}},
		{10 * time.Second, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
	})
	t.Run("after a finished turn nothing is told", func(t *testing.T) {
		run(t, testSettings(), []step{
			{0, event(classify.TurnStarted, process(classify.StatusBusy, "")), []string{"state working"}},
			{1 * time.Second, event(classify.TurnDone), []string{"state finished"}},
			{5 * time.Second, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
		})
	})
}

func TestResumedSessionIsNoLongerGone(t *testing.T) {
	run(t, testSettings(), []step{
		{0, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
		{1 * time.Minute, event(classify.UserMessage), []string{"state working"}},
		{2 * time.Minute, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +2m10s (attempt 1 of 3)",
			"wake +2m10s",
		}},
		{2*time.Minute + 10*time.Second, tick, send1},
	})
}

func TestUndeliverable(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, send1},
		{11 * time.Second, delivered(1, advice.Why{Cause: advice.Gone, Place: "tmux /tmp/tmux-0/default %3"}), gaveUp(
			"nudge could not continue testagent: its process has exited or its terminal now runs something else; resume the session and type continue.", 1, "")},
		{12 * time.Second, delivered(1, nil), []string{
			"decide: delivery report for attempt 1 ignored: no such continuation is outstanding",
		}},
		{time.Minute, tick, nil},
	})
}

func TestLateDeliveryFailureAfterPersonTyped(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, send1},
		{11 * time.Second, typed("never mind"), []string{
			"decide: the person typed a message: retry episode over, attempt counter reset",
			"state working",
		}},
		{12 * time.Second, delivered(1, errors.New("the agent is not idle")), []string{
			"decide: attempt 1: delivery reported after the session moved on; nothing to do",
		}},
	})
}

func TestFailureClasses(t *testing.T) {
	auth := func(ev *classify.Event) { ev.Failure.Hint = "run claude /login" }
	const signIn = "testagent needs you to sign in again: run claude /login, then type continue in the session."
	cases := []struct {
		name string
		ev   call
		want []string
	}{
		{"auth", fail(classify.Auth, "Invalid API key", auth), []string{
			"decide[told]: told the person: " + signIn,
			`entry "` + signIn + `" auth "Invalid API key" attempts=0`,
			`notify "testagent needs sign-in" "/home/dev/project: ` + signIn + ` — Invalid API key"`,
			"state needs_signin (" + signIn + ")",
		}},
		{"rejected", fail(classify.Rejected, "prompt is too long"), []string{
			"decide[told]: told the person: the provider refused the request; not retried",
			`entry "the provider refused the request; not retried" rejected "prompt is too long" attempts=0`,
			"state failed",
		}},
		{"unknown", fail(classify.Unknown, "something odd"), []string{
			"decide[told]: told the person: the turn failed with an error nudge does not recognise; not retried",
			`entry "the turn failed with an error nudge does not recognise; not retried" unknown "something odd" attempts=0`,
			"state failed",
		}},
		{"cancelled", fail(classify.Cancelled, "[Request interrupted by user]"), []string{"state cancelled"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run(t, testSettings(), []step{{0, c.ev, c.want}, {10 * time.Second, tick, nil}})
		})
	}
}

func TestOtherClassEndsPendingEpisode(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +1m30s (attempt 2 of 3)",
			"wake +1m30s",
		}},
		{time.Minute + 5*time.Second, fail(classify.Rejected, "model not found"), []string{
			"decide: the provider refused the request: pending attempt 2 cancelled",
			"decide[told]: told the person: the provider refused the request; not retried",
			`entry "the provider refused the request; not retried" rejected "model not found" attempts=1`,
			"state failed",
		}},
		{time.Minute + 30*time.Second, tick, nil},
		{time.Minute + 40*time.Second, fail(classify.Cancelled, ""), []string{"state cancelled"}},
	}))
}

func TestRetryOff(t *testing.T) {
	set := testSettings()
	set.Enabled = false
	off := func(msg string) []string {
		return []string{
			"decide: retry is off: one Inbox entry, no continuation",
			"decide[told]: told the person: the turn failed with a provider error; retry is off",
			`entry "the turn failed with a provider error; retry is off" provider_error "` + msg + `" attempts=0`,
		}
	}
	run(t, set, []step{
		{0, fail(pe, err500), append(off(err500), "state failed")},
		{10 * time.Second, tick, nil},
		{20 * time.Second, fail(pe, err529), off(err529)}, // each dead turn: exactly one entry
	})
}

func TestSwitchingRetryOffCancelsPending(t *testing.T) {
	run(t, testSettings(), steps(attempt1(), []step{
		{time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +1m30s (attempt 2 of 3)",
			"wake +1m30s",
		}},
		{time.Minute + 5*time.Second, reconfigure(func(s *Settings) { s.Enabled = false }), []string{
			"decide: retry is off: pending attempt 2 cancelled",
			"decide[told]: told the person: the turn failed with a provider error; retry is off",
			`entry "the turn failed with a provider error; retry is off" provider_error "API Error: 500 Internal server error" attempts=1 latest="API Error: 529 Overloaded"`,
			"state failed",
		}},
		{time.Minute + 30*time.Second, tick, nil},
		{2 * time.Minute, reconfigure(func(s *Settings) { s.Enabled = true }), nil}, // no resurrection
		{3 * time.Minute, tick, nil},
	}))
}

func TestPause(t *testing.T) {
	set := testSettings()
	set.Paused = true
	run(t, set, []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, []string{
			"decide: paused: attempt 1 waits until nudge is unpaused",
			"state retrying until +10s (attempt 1 of 3, paused)",
		}},
		{time.Minute, tick, nil},
		{2 * time.Minute, reconfigure(func(s *Settings) { s.Paused = false }), []string{
			"decide: unpaused: attempt 1 is re-checked at 2026-11-30T09:02:00Z",
			"state retrying until +2m (attempt 1 of 3)",
			"wake +2m",
		}},
		{2 * time.Minute, tick, send1},
	})
}

func TestPauseBeforeDue(t *testing.T) {
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{2 * time.Second, reconfigure(func(s *Settings) { s.Paused = true }), []string{
			"decide: paused: attempt 1 waits until nudge is unpaused",
			"state retrying until +10s (attempt 1 of 3, paused)",
		}},
		{10 * time.Second, tick, nil},
		{12 * time.Second, reconfigure(func(s *Settings) { s.Paused = false }), []string{
			"decide: unpaused: attempt 1 is re-checked at 2026-11-30T09:00:12Z",
			"state retrying until +12s (attempt 1 of 3)",
			"wake +12s",
		}},
		{12 * time.Second, tick, send1},
	})
}

// TestDraftHoldsWithoutSpendingAnAttempt: a delivery that comes back held
// because the person has text in the prompt types nothing and spends no
// attempt: the same attempt waits as for an open box, says so, and goes
// in once the prompt is clear (docs/behaviour.md §3 "The person at the
// keyboard").
func TestDraftHoldsWithoutSpendingAnAttempt(t *testing.T) {
	held := advice.Why{Cause: advice.Draft, Held: true, Place: "tmux /tmp/t %1"}
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, []string{
			"decide: sending attempt 1 (retry): nothing holds it",
			`inject #1 "go on"`,
		}},
		{10 * time.Second, delivered(1, held), []string{
			"decide: attempt 1 is due but the prompt holds text that is not nudge's: next check at 2026-11-30T09:00:20Z",
			"state waiting_you until +20s (waiting: you have unsent text in the prompt)",
			"wake +20s",
		}},
		// Records of the agent say nothing of the draft: no early re-check.
		{12 * time.Second, event(classify.AgentIdle, process(classify.StatusIdle, "")), nil},
		{20 * time.Second, tick, []string{
			"decide: sending attempt 1 (retry): nothing holds it",
			`inject #1 "go on"`,
		}},
		{20 * time.Second, delivered(1, held), []string{
			"decide: attempt 1 is due but the prompt holds text that is not nudge's: next check at 2026-11-30T09:00:40Z",
			"state waiting_you until +40s (waiting: you have unsent text in the prompt)",
			"wake +40s",
		}},
		{40 * time.Second, tick, []string{
			"decide: sending attempt 1 (retry): nothing holds it",
			`inject #1 "go on"`,
		}},
		{40 * time.Second, delivered(1, nil), []string{
			"decide: attempt 1 delivered; waiting for its turn to end",
			"state working (continuation sent (attempt 1 of 3))",
		}},
	})
}

// TestDraftHeldForAnHourIsTold: a draft that stays gives up after the
// hour an open box gets, telling the person; no attempt was spent.
func TestDraftHeldForAnHourIsTold(t *testing.T) {
	set := testSettings()
	set.BoxFirstCheck, set.BoxMaxGap, set.BoxGiveUp = time.Second, 4*time.Second, 10*time.Second
	held := advice.Why{Cause: advice.Draft, Held: true, Place: "tmux /tmp/t %1"}
	s := run(t, set, []step{{0, fail(pe, err500), schedule1}})
	var last []string
	for now := 10 * time.Second; now < time.Minute; now += time.Second {
		for _, a := range s.Tick(t0.Add(now), set) {
			if in, ok := a.(Inject); ok {
				last = renderAll(t, s, s.Delivered(in.Attempt, held, t0.Add(now), set))
			}
		}
	}
	want := gaveUp("nudge did not continue testagent: its prompt at tmux /tmp/t %1 held text of yours, unsent, for 10s, and nudge never types over it; send or clear it, then type continue in the session.", 0, "")
	if !equal(last, want) {
		t.Fatalf("the last held delivery:\n\t%s\nwant:\n\t%s", strings.Join(last, "\n\t"), strings.Join(want, "\n\t"))
	}
	if st, _ := s.State(); st != GaveUp {
		t.Errorf("state %s after the hour, want gave_up", st)
	}
}
