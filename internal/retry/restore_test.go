package retry

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"nudge/internal/advice"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/internal/classify"
)

func TestRestorePendingRetry(t *testing.T) {
	set := testSettings()
	s := run(t, set, []step{{0, fail(pe, err500), schedule1}})
	s = restore(t, s)
	if st, until := s.State(); st != Retrying || !until.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("restored state %s until %s, want retrying until +10s", st, offset(until))
	}
	if s.project != testProject {
		t.Fatalf("restored project %q", s.project)
	}
	runOn(t, s, &set, []step{
		{5 * time.Second, tick, []string{"wake +10s"}}, // the daemon re-arms its timer this way
		{10 * time.Second, tick, send1},
	})
}

func TestRestoreKeepsCounter(t *testing.T) {
	set := testSettings()
	s := run(t, set, steps(attempt1(), []step{
		{time.Minute, fail(pe, err529), []string{
			"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
			"state retrying until +1m30s (attempt 2 of 3)",
			"wake +1m30s",
		}},
	}))
	s = restore(t, s)
	runOn(t, s, &set, []step{
		{time.Minute + 30*time.Second, tick, []string{
			"decide: sending attempt 2 (retry): nothing holds it",
			`inject #2 "go on"`,
		}},
	})
}

func TestRestoreNeverResends(t *testing.T) {
	t.Run("sent and delivered", func(t *testing.T) {
		set := testSettings()
		s := run(t, set, attempt1()[:3])
		s = restore(t, s)
		runOn(t, s, &set, []step{
			{20 * time.Second, tick, nil},
			{11 * time.Second, typed(testMessage), echo1}, // still known as nudge's own
			{time.Minute, fail(pe, err529), []string{
				"decide[scheduled]: provider error: attempt 2 of 3 in 30s",
				"state retrying until +1m30s (attempt 2 of 3)",
				"wake +1m30s",
			}},
		})
	})
	t.Run("issued, delivery unknown", func(t *testing.T) {
		// The daemon recorded the attempt as "sending" and stopped before
		// it knew the outcome; after the restart it reports it.
		set := testSettings()
		s := run(t, set, attempt1()[:2])
		s = restore(t, s)
		runOn(t, s, &set, []step{
			{20 * time.Second, tick, nil},
			{time.Hour, tick, nil},
			{time.Hour, delivered(1, advice.Why{Cause: advice.Stopped}), gaveUp(
				"nudge stopped before typing its continuation into testagent and does not send it again; type continue in the session yourself.", 1, "")},
			{2 * time.Hour, tick, nil},
		})
	})
	t.Run("issued, counted as sent", func(t *testing.T) {
		set := testSettings()
		s := run(t, set, attempt1()[:2])
		s = restore(t, s)
		runOn(t, s, &set, []step{
			{time.Minute, delivered(1, nil), delivered1},
			{time.Minute, tick, nil},
		})
		s = restore(t, s)
		runOn(t, s, &set, []step{
			{2 * time.Minute, tick, nil},
			{2 * time.Minute, delivered(1, nil), []string{
				"decide: delivery report for attempt 1 ignored: no such continuation is outstanding",
			}},
		})
	})
}

func TestDefaultSettings(t *testing.T) {
	set := DefaultSettings()
	if !set.Enabled || set.ContinueAfterUsageLimit || set.Paused {
		t.Errorf("toggles: %+v", set)
	}
	want := []time.Duration{10 * time.Second, 30 * time.Second, 90 * time.Second}
	if len(set.Delays) != len(want) {
		t.Fatalf("delays %v, want %v", set.Delays, want)
	}
	for i := range want {
		if set.Delays[i] != want[i] {
			t.Errorf("delay %d = %s, want %s", i, set.Delays[i], want[i])
		}
	}
	if set.BoxFirstCheck != 10*time.Second || set.BoxMaxGap != 5*time.Minute || set.BoxGiveUp != time.Hour {
		t.Errorf("box timings %s %s %s", set.BoxFirstCheck, set.BoxMaxGap, set.BoxGiveUp)
	}
	if set.UsageLimitMargin != time.Minute || set.UsageLimitMarginAutoContinue != 3*time.Minute {
		t.Errorf("usage limit margins %s %s", set.UsageLimitMargin, set.UsageLimitMarginAutoContinue)
	}
	m := set.Message
	if !strings.Contains(m, "provider error") || !strings.Contains(m, "continue where you left off") {
		t.Errorf("default message does not say what happened and what to do: %q", m)
	}
	if strings.ContainsAny(m, "\r\n") {
		t.Errorf("default message spans lines (a newline would submit early): %q", m)
	}
}

func TestEmptySettingsUseDefaults(t *testing.T) {
	run(t, Settings{Enabled: true}, []step{
		{0, fail(pe, err500), schedule1},
		{10 * time.Second, tick, []string{
			"decide: sending attempt 1 (retry): nothing holds it",
			`inject #1 "` + DefaultMessage + `"`,
		}},
	})
}

// TestRandomSessionsKeepPromises drives sessions through random events,
// ticks, reports, setting changes and restarts, and checks the promises
// that hold whatever happens: no panic, injections only from Tick when
// nothing holds them, never a fourth retry or the same attempt twice in an
// episode, never an attempt while paused or while a box is open.
func TestRandomSessionsKeepPromises(t *testing.T) {
	kinds := []classify.Kind{classify.TurnStarted, classify.UserMessage, classify.AgentActivity,
		classify.AgentRetrying, classify.TurnDone, classify.TurnFailed, classify.TurnFailed, classify.TurnFailed,
		classify.BoxOpened, classify.BoxClosed, classify.UsageLimited, classify.AgentIdle}
	classes := []classify.Class{pe, pe, pe, classify.UsageLimit, classify.Auth, classify.Rejected,
		classify.Cancelled, classify.Unknown}
	statuses := []string{"", classify.StatusIdle, classify.StatusBusy, classify.StatusWaiting, classify.StatusExited}
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := NewSession(testKey)
		set := testSettings()
		now := t0
		box := false
		lastRetry := 0 // the last retry attempt injected in this episode
		outstanding := 0
		for i := 0; i < 200; i++ {
			now = now.Add(time.Duration(rng.IntN(120)) * time.Second)
			var acts []Action
			fromTick := false
			switch r := rng.IntN(10); {
			case r < 5:
				ev := classify.Event{Time: now.Add(-time.Duration(rng.IntN(5)) * time.Second),
					Kind: kinds[rng.IntN(len(kinds))], Project: testProject}
				switch ev.Kind {
				case classify.TurnFailed, classify.UsageLimited:
					ev.Failure = &classify.Failure{Class: classes[rng.IntN(len(classes))], Message: "m"}
					if rng.IntN(2) == 0 {
						ev.Failure.ResetAt = now.Add(time.Duration(rng.IntN(3600)) * time.Second)
					}
					ev.AutoContinue = rng.IntN(2) == 0
					if ev.Kind == classify.UsageLimited {
						ev.Failure.Class = classify.UsageLimit
					}
				case classify.UserMessage:
					ev.Text = []string{testMessage, "hello"}[rng.IntN(2)]
				}
				if rng.IntN(3) == 0 {
					ev.Process = &classify.Process{Status: statuses[rng.IntN(len(statuses))]}
				}
				acts = s.Observe(ev, now, set)
				box = box && ev.Kind != classify.BoxClosed || ev.Kind == classify.BoxOpened
				if ev.Kind == classify.TurnDone || ev.Kind == classify.UserMessage && ev.Text != testMessage ||
					ev.Kind == classify.UsageLimited || ev.Kind == classify.TurnFailed && ev.Failure.Class != pe {
					lastRetry = 0
				}
			case r < 8:
				acts, fromTick = s.Tick(now, set), true
			case r < 9:
				var err error
				if rng.IntN(2) == 0 {
					err = errors.New("no terminal")
				}
				acts = s.Delivered(outstanding, err, now, set)
			default:
				switch rng.IntN(4) {
				case 0:
					set.Enabled = !set.Enabled
				case 1:
					set.Paused = !set.Paused
				case 2:
					set.ContinueAfterUsageLimit = !set.ContinueAfterUsageLimit
				default:
					s = restore(t, s)
				}
				lastRetry = 0 // switching retry back on starts afresh
				acts = s.Reconfigure(now, set)
			}
			if err := s.invariants(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
			for _, a := range acts {
				in, ok := a.(Inject)
				if !ok {
					continue
				}
				switch {
				case !fromTick:
					t.Fatalf("seed %d step %d: inject outside Tick", seed, i)
				case set.Paused:
					t.Fatalf("seed %d step %d: inject while paused", seed, i)
				case box:
					t.Fatalf("seed %d step %d: inject while a box is open", seed, i)
				case in.Attempt < 1 || in.Attempt > MaxAttempts:
					t.Fatalf("seed %d step %d: attempt %d", seed, i, in.Attempt)
				}
				outstanding = in.Attempt
				if s.sent.For == forRetry {
					if in.Attempt <= lastRetry {
						t.Fatalf("seed %d step %d: attempt %d after attempt %d in one episode", seed, i, in.Attempt, lastRetry)
					}
					lastRetry = in.Attempt
				}
			}
		}
	}
}

func TestRestoreDropsOrphanPending(t *testing.T) {
	var s Session
	if err := json.Unmarshal([]byte(`{"key":{"agent":"testagent","session":"s1"},"pending":{"for":"retry","attempt":2,"at":"2026-11-30T09:00:10Z"}}`), &s); err != nil {
		t.Fatal(err)
	}
	set := testSettings()
	set.Enabled = false
	runOn(t, &s, &set, []step{
		{10 * time.Second, tick, nil},
		{10 * time.Second, reconfigure(func(*Settings) {}), nil},
	})
	if err := json.Unmarshal([]byte(`{"pending":`), &s); err == nil {
		t.Fatal("truncated state restored without an error")
	}
}

// FuzzRestore feeds damaged stored state to the machine: it must restore
// with an error, or restore a session that keeps the invariants (Session),
// stores and restores again as it is, and keeps them through every call
// without a panic.
func FuzzRestore(f *testing.F) {
	set := testSettings()
	s := NewSession(testKey)
	s.Observe(classify.Event{Kind: classify.TurnFailed, Time: t0, Failure: &classify.Failure{Class: pe, Message: "x"}}, t0, set)
	seed, err := json.Marshal(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"pending":{"for":"usage_limit","attempt":1},"sent":{"for":"retry","attempt":1}}`))
	forms, err := filepath.Glob(filepath.Join("testdata", "stored", "*", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, form := range forms {
		b, err := os.ReadFile(form)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Session
		if json.Unmarshal(b, &s) != nil {
			return
		}
		keeps := func(after string) {
			t.Helper()
			if err := s.invariants(); err != nil {
				t.Fatalf("after %s: %v", after, err)
			}
		}
		keeps("restoring")
		again, err := json.Marshal(&s)
		if err != nil {
			t.Fatalf("a restored session does not store: %v", err)
		}
		var back Session
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("a restored session, stored again, does not restore: %v\n%s", err, again)
		}
		if twice, _ := json.Marshal(&back); string(twice) != string(again) {
			t.Fatalf("stored again, restored and stored, it changed:\n%s\n%s", again, twice)
		}
		now := t0.Add(time.Hour)
		off := set
		off.Enabled, off.ContinueAfterUsageLimit = false, false
		s.Restored(now, set)
		keeps("Restored")
		s.Tick(now, set)
		keeps("Tick")
		s.Delivered(1, errors.New("x"), now, set)
		keeps("Delivered")
		s.Observe(classify.Event{Kind: classify.TurnFailed, Time: now, Failure: &classify.Failure{Class: pe}}, now, set)
		keeps("a provider error")
		s.Reconfigure(now, off)
		keeps("Reconfigure")
		s.Observe(classify.Event{Kind: classify.UsageLimited, Process: &classify.Process{Status: classify.StatusExited}}, now, set)
		keeps("a usage limit")
		s.Tick(now.Add(time.Hour), set)
		keeps("a later Tick")
	})
}

func TestDaemonHooks(t *testing.T) {
	set := testSettings()
	var issued []Inject
	ledger := func(c call) call {
		run := c.run
		c.run = func(s *Session, now time.Time, set *Settings) []Action {
			acts := run(s, now, set)
			for _, a := range acts {
				if in, ok := a.(Inject); ok {
					issued = append(issued, in)
				}
			}
			return acts
		}
		return c
	}
	s := run(t, set, []step{{0, fail(pe, err500), schedule1}})
	s = restore(t, s)
	if at, ok := s.NextWake(); !ok || !at.Equal(t0.Add(10*time.Second)) {
		t.Errorf("restored next wake %s %v, want +10s", offset(at), ok)
	}
	if s.Note() != "attempt 1 of 3" {
		t.Errorf("note %q", s.Note())
	}
	first := attempt1()[1:]
	first[0].do = ledger(first[0].do)
	runOn(t, s, &set, first[:2])
	if s.Echoed(1) {
		t.Error("attempt 1 echoed before its user message was seen")
	}
	runOn(t, s, &set, steps(first[2:], []step{
		{time.Minute, event(classify.TurnDone), []string{"decide[recovered]: turn completed after continuation 1: recovered", "state finished"}},
	}))
	if !s.Echoed(1) || s.Echoed(2) {
		t.Errorf("echoed: attempt 1 %v, attempt 2 %v; want only attempt 1", s.Echoed(1), s.Echoed(2))
	}
	if len(issued) != 1 || issued[0].Episode == "" {
		t.Fatalf("no episode named for attempt 1: %+v", issued)
	}
	if _, ok := s.NextWake(); ok {
		t.Error("next wake with nothing pending")
	}
	runOn(t, s, &set, []step{
		{2 * time.Minute, fail(pe, err500), []string{
			"decide[scheduled]: provider error: attempt 1 of 3 in 10s",
			"state retrying until +2m10s (attempt 1 of 3)",
			"wake +2m10s",
		}},
		{2*time.Minute + 10*time.Second, ledger(tick), send1},
	})
	if len(issued) != 2 || issued[1].Episode == issued[0].Episode || issued[1].Episode == "" {
		t.Errorf("a new episode's attempt 1 is named %q, the old one %q: the ledger would refuse it", issued[1].Episode, issued[0].Episode)
	}
}
