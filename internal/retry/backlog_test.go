package retry

import (
	"nudge/internal/advice"
	"testing"
	"time"

	"nudge/internal/classify"
)

// TestTurnEndsOnce: a second ending of a turn is a repeat. One that names
// its turn repeats the ending of the same turn only; one that does not is a
// repeat when its reader began in the middle of the file (after a restart)
// and read no start of a turn since. A new turn ends anew.
func TestTurnEndsOnce(t *testing.T) {
	done := classify.Event{Kind: classify.TurnDone}
	turn := func(id string) classify.Event { return classify.Event{Kind: classify.TurnDone, ID: "turn " + id} }
	s := NewSession(testKey)
	set := testSettings()
	if s.Repeats(done, true) {
		t.Fatal("the first ending of a fresh session is a repeat")
	}
	runOn(t, s, &set, []step{{0, fail(pe, err500), schedule1}})
	s = restore(t, s)
	if !s.Repeats(done, true) {
		t.Fatal("a turn_done right after the dead turn, read by a reader that began midway, is not a repeat")
	}
	if s.Repeats(done, false) {
		t.Fatal("a turn_done from a reader that read the file through is a repeat")
	}
	if s.Repeats(classify.Event{Kind: classify.TurnFailed}, true) || s.Repeats(classify.Event{Kind: classify.AgentIdle}, true) {
		t.Fatal("only a turn_done repeats an ending")
	}
	runOn(t, s, &set, []step{{5 * time.Second, event(classify.TurnStarted), []string{
		"decide: the agent is working (turn_started): pending attempt 1 cancelled",
		"state working",
	}}})
	if s.Repeats(done, true) {
		t.Fatal("the ending of a new turn is a repeat")
	}
	runOn(t, s, &set, []step{{6 * time.Second, event(classify.TurnDone, func(e *classify.Event) { e.ID = "turn A" }), []string{
		"decide: turn completed: attempt counter reset", "state finished",
	}}})
	s = restore(t, s)
	if !s.Repeats(turn("A"), false) {
		t.Fatal("the same turn's ending again is not a repeat")
	}
	if s.Repeats(turn("B"), true) {
		t.Fatal("another turn's ending, named by its turn, is a repeat")
	}
}

// A provider error written while nudge was not running, recent and still
// the session's last word, is retried as usual.
func TestBacklogRecentDeadTurnIsRetried(t *testing.T) {
	run(t, testSettings(), []step{
		{0, backlog(fail(pe, err500, recorded(t0.Add(-BacklogRecent+time.Second)))), schedule1},
		{time.Second, backlog(event(classify.AgentIdle, process("idle", ""))), nil},
		{10 * time.Second, tick, send1},
	})
}

// One older than BacklogRecent (or without a record time) is told once and
// not retried.
func TestBacklogOldDeadTurnIsTold(t *testing.T) {
	told := func(msg string) []string {
		return []string{
			"decide: provider error written while nudge was not running, more than 10m ago: told, not retried",
			"decide[told]: told the person: the turn failed with a provider error while nudge was not running; too long ago to retry",
			`entry "the turn failed with a provider error while nudge was not running; too long ago to retry" provider_error "` + msg + `" attempts=0`,
		}
	}
	run(t, testSettings(), []step{
		{0, backlog(fail(pe, err500, recorded(t0.Add(-BacklogRecent-time.Second)))), append(told(err500), "state failed")},
		{time.Second, backlog(fail(pe, err529, recorded(time.Time{}))), told(err529)},
		{time.Minute, tick, nil},
	})
}

// A recent one followed, in what was written meanwhile, by the session going
// on (a person's message, a new turn) is told instead of retried; one
// cancelled after nudge is back is not (the person is there).
func TestBacklogSessionWentOn(t *testing.T) {
	wentOn := []string{
		"decide: the person typed a message: pending attempt 1 cancelled",
		"state working",
		"decide: the session went on while nudge was not running: the dead turn is told, not retried",
		"decide[told]: told the person: the turn failed with a provider error while nudge was not running; the session went on since, so it was not retried",
		`entry "the turn failed with a provider error while nudge was not running; the session went on since, so it was not retried" provider_error "` + err500 + `" attempts=0`,
	}
	run(t, testSettings(), []step{
		{0, backlog(fail(pe, err500)), schedule1},
		{time.Second, backlog(typed("something else")), wentOn},
		{10 * time.Second, tick, nil},
	})
	run(t, testSettings(), []step{
		{0, backlog(fail(pe, err500)), schedule1},
		{2 * time.Second, typed("something else"), []string{
			"decide: the person typed a message: pending attempt 1 cancelled",
			"state working",
		}},
	})
}

// Other classes are told as usual whenever they were written.
func TestBacklogOtherClassesAreToldAsUsual(t *testing.T) {
	run(t, testSettings(), []step{
		{0, backlog(fail(classify.Rejected, "prompt too long", recorded(t0.Add(-time.Hour)))), []string{
			"decide[told]: told the person: the provider refused the request; not retried",
			`entry "the provider refused the request; not retried" rejected "prompt too long" attempts=0`,
			"state failed",
		}},
	})
}

// A continuation that fell due while nudge was not running is sent after a
// restart if it is at most BacklogRecent late, and told otherwise.
func TestRestoredLateContinuation(t *testing.T) {
	set := testSettings()
	s := run(t, set, []step{{0, fail(pe, err500), schedule1}})
	s = restore(t, s)
	if acts := s.Restored(t0.Add(10*time.Second+BacklogRecent), set); len(acts) != 0 {
		t.Fatalf("a continuation due %s ago was dropped: %v", BacklogRecent, renderAll(t, s, acts))
	}
	runOn(t, s, &set, []step{{BacklogRecent + 10*time.Second, call{name: "restored", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Restored(now.Add(time.Second), *set)
	}}, gaveUp("nudge was not running when its continuation into testagent was due at 09:00 UTC, Mon 30 Nov, "+
		"and does not send it this late; type continue in the session yourself.", 0, "")}, {BacklogRecent + time.Minute, tick, nil}})
}

// An attempt cut while typing is told, also when the session moved on since
// (its text may still sit in the prompt); its retry is over.
func TestInterrupted(t *testing.T) {
	why := advice.Why{Cause: advice.Cut, Place: "tmux /tmp/tmux-0/default %3"}
	interrupted := call{name: "interrupted", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Interrupted(1, why, now, *set)
	}}
	const what = "nudge stopped while typing its continuation into testagent at tmux /tmp/tmux-0/default %3, " +
		"so it may sit unsent in the prompt there and nudge types nothing over it; check the prompt before you type."
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, send1},
		{time.Minute, interrupted, []string{
			"decide[told]: told the person: " + what,
			`entry "` + what + `" provider_error "` + err500 + `" attempts=1`,
			`notify "testagent needs attention" "/home/dev/project: ` + what + ` — ` + err500 + `"`,
			"state gave_up (" + what + ")",
		}},
		{2 * time.Minute, fail(pe, err529), []string{
			"decide: provider error after nudge gave up on this episode: no more attempts",
			"decide[told]: told the person: the turn failed again after nudge gave up; not retried",
			`entry "the turn failed again after nudge gave up; not retried" provider_error "` + err529 + `" attempts=1`,
		}},
	})
	run(t, testSettings(), []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, send1},
		{20 * time.Second, typed("something else"), []string{
			"decide: the person typed a message: retry episode over, attempt counter reset",
			"state working",
		}},
		{time.Minute, interrupted, []string{
			"decide: attempt 1 was cut while typing, after the session moved on: telling the person",
			"decide[told]: told the person: " + what,
			`entry "` + what + `"  "" attempts=1`,
			`notify "testagent needs attention" "/home/dev/project: ` + what + `"`,
		}},
	})
}
