package retry

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// updateStored rewrites the current stored form of every scenario and the
// transcripts. Run it only when the stored form or the behaviour changes
// on purpose: the forms of earlier releases under testdata/stored stay as
// those releases wrote them.
var updateStored = flag.Bool("update-stored", false, "rewrite testdata/stored for the current stored form")

// storedScenario builds a session into a state worth storing, then goes
// on from its stored form.
type storedScenario struct {
	name  string
	set   func() Settings
	build []step // their actions are recorded, not asserted
	after []step
}

func storedScenarios() []storedScenario {
	stopped := call{name: "interrupted #1", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Interrupted(1, advice.Why{Cause: advice.Stopped}, now, *set)
	}}
	restored := call{name: "restored", run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Restored(now, *set)
	}}
	box := event(classify.BoxOpened, func(ev *classify.Event) { ev.Box = "question" })
	min := time.Minute
	return []storedScenario{
		{name: "pending-retry", set: testSettings, build: []step{{0, fail(pe, err500), nil}}, after: []step{
			{5 * time.Second, restored, nil},
			{10 * time.Second, tick, nil},
			{10 * time.Second, delivered(1, nil), nil},
			{11 * time.Second, typed(testMessage), nil},
			{min, fail(pe, err529), nil},
			{min + 30*time.Second, tick, nil},
			{min + 30*time.Second, delivered(2, errors.New("no terminal")), nil},
		}},
		{name: "pending-retry-late", set: testSettings, build: []step{{0, fail(pe, err500), nil}}, after: []step{
			{BacklogRecent + 11*time.Second, restored, nil},
			{BacklogRecent + 11*time.Second, tick, nil},
		}},
		{name: "sent-unreported", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{min, restored, nil},
			{min, delivered(1, nil), nil},
			{min + time.Second, typed(testMessage), nil},
			{2 * min, event(classify.TurnDone), nil},
		}},
		{name: "sent-interrupted", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{min, stopped, nil},
			{2 * min, fail(pe, err529), nil},
		}},
		{name: "sent-echoed", set: testSettings, build: attempt1(), after: []step{
			{min, fail(pe, err529), nil},
			{min + 30*time.Second, tick, nil},
			{min + 30*time.Second, delivered(2, nil), nil},
			{min + 31*time.Second, typed(testMessage), nil},
			{3 * min, fail(pe, err500), nil},
			{4*min + 30*time.Second, tick, nil},
			{4*min + 30*time.Second, delivered(3, nil), nil},
			{6 * min, fail(pe, err500), nil},
		}},
		{name: "held-by-box", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{2 * time.Second, box, nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{20 * time.Second, tick, nil},
			{30 * time.Second, tick, nil},
			{35 * time.Second, event(classify.BoxClosed), nil},
			{35 * time.Second, tick, nil},
		}},
		{name: "held-by-registry", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{2 * time.Second, event(classify.BoxOpened, process(classify.StatusWaiting, "permission prompt")), nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{time.Hour, tick, nil},
			{time.Hour + 10*time.Second, tick, nil},
		}},
		{name: "held-then-idle", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{2 * time.Second, event(classify.AgentIdle, process(classify.StatusWaiting, "permission prompt")), nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{20 * time.Second, tick, nil},
			{25 * time.Second, event(classify.AgentIdle, process(classify.StatusIdle, "")), nil},
			{25 * time.Second, tick, nil},
		}},
		{name: "paused", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{5 * time.Second, reconfigure(func(s *Settings) { s.Paused = true }), nil},
			{10 * time.Second, tick, nil},
		}, after: []step{
			{time.Hour, restored, nil},
			{time.Hour, tick, nil},
			{time.Hour, reconfigure(func(s *Settings) { s.Paused = false }), nil},
			{time.Hour, tick, nil},
		}},
		{name: "attempt-2-pending", set: testSettings, build: steps(attempt1(), []step{
			{min, fail(pe, err529), nil},
		}), after: []step{
			{min + 10*time.Second, reconfigure(func(s *Settings) { s.Enabled = false }), nil},
			{2 * min, tick, nil},
		}},
		{name: "gave-up", set: testSettings, build: steps(attempt1(), []step{
			{min, fail(pe, err529), nil},
			{min + 30*time.Second, tick, nil},
			{min + 30*time.Second, delivered(2, nil), nil},
			{min + 31*time.Second, typed(testMessage), nil},
			{3 * min, fail(pe, err529), nil},
			{4*min + 30*time.Second, tick, nil},
			{4*min + 30*time.Second, delivered(3, nil), nil},
			{4*min + 31*time.Second, typed(testMessage), nil},
			{6 * min, fail(pe, err529), nil},
		}), after: []step{
			{7 * min, fail(pe, err500), nil},
			{8 * min, event(classify.TurnDone), nil},
			{9 * min, fail(pe, err500), nil},
		}},
		{name: "backlog-pending", set: testSettings, build: []step{
			{0, backlog(fail(pe, err500, recorded(t0.Add(-min)))), nil},
		}, after: []step{
			{time.Second, backlog(event(classify.TurnStarted)), nil},
			{10 * time.Second, tick, nil},
		}},
		{name: "limit-continue-pending", set: continueSettings, build: []step{
			{0, limitHit(resetAt(reset)), nil},
		}, after: []step{
			{min, restored, nil},
			{min, limitHit(resetAt(reset)), nil},
			{3*time.Hour + min, tick, nil},
			{3*time.Hour + min, delivered(1, nil), nil},
			{3*time.Hour + 2*min, typed(testMessage), nil},
			{3*time.Hour + 5*min, event(classify.TurnDone), nil},
		}},
		{name: "limit-auto-continue", set: continueSettings, build: []step{
			{0, autoContinue, nil},
		}, after: []step{
			{3*time.Hour + min, tick, nil},
			{3*time.Hour + 3*min, tick, nil},
			{3*time.Hour + 3*min, delivered(1, errors.New("no terminal")), nil},
		}},
		{name: "limit-told-then-work", set: testSettings, build: []step{
			{0, limitHit(resetAt(reset)), nil},
			{min, event(classify.TurnStarted), nil},
		}, after: []step{
			{2 * min, autoContinue, nil},
			{3 * min, reconfigure(func(s *Settings) { s.ContinueAfterUsageLimit = true }), nil},
			{3*time.Hour + 3*min, tick, nil},
		}},
		{name: "limit-continued", set: continueSettings, build: []step{
			{0, limitHit(resetAt(reset)), nil},
			{3*time.Hour + min, tick, nil},
			{3*time.Hour + min, delivered(1, nil), nil},
		}, after: []step{
			{3*time.Hour + 2*min, limitHit(resetAt(reset)), nil},
			{3*time.Hour + 4*min, tick, nil},
			{4 * time.Hour, event(classify.TurnDone), nil},
			{5 * time.Hour, limitHit(resetAt(reset.Add(3 * time.Hour))), nil},
		}},
		{name: "limit-without-reset", set: continueSettings, build: []step{
			{0, limitHit(), nil},
		}, after: []step{
			{min, tick, nil},
			{2 * min, fail(pe, err500), nil},
			{3 * min, reconfigure(func(s *Settings) { s.ContinueAfterUsageLimit = false }), nil},
			{4 * min, typed("hello"), nil},
			{5 * min, fail(pe, err500), nil},
		}},
		{name: "turn-done", set: testSettings, build: []step{
			{0, event(classify.TurnStarted), nil},
			{min, event(classify.TurnDone, func(ev *classify.Event) { ev.ID = "turn A" }), nil},
		}, after: []step{
			{2 * min, fail(pe, err500), nil},
			{3 * min, event(classify.AgentActivity), nil},
		}},
		{name: "agent-exited", set: testSettings, build: []step{
			{0, event(classify.TurnDone), nil},
			{min, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
		}, after: []step{
			{2 * min, fail(pe, err500), nil},
			{2*min + 10*time.Second, tick, nil},
			{3 * min, typed("hello"), nil},
			{4 * min, fail(pe, err500), nil},
			{4*min + 10*time.Second, tick, nil},
		}},
		{name: "working-crashed", set: testSettings, build: []step{
			{0, typed("hello"), nil},
		}, after: []step{
			{min, event(classify.AgentIdle, process(classify.StatusExited, "")), nil},
		}},
		{name: "needs-sign-in", set: testSettings, build: []step{
			{0, fail(classify.Auth, "401 Unauthorized"), nil},
		}, after: []step{
			{min, fail(pe, err500), nil},
			{min + 10*time.Second, tick, nil},
		}},
		{name: "cancelled", set: testSettings, build: []step{
			{0, fail(pe, err500), nil},
			{5 * time.Second, fail(classify.Cancelled, ""), nil},
		}, after: []step{
			{10 * time.Second, tick, nil},
			{min, fail(pe, err500), nil},
		}},
	}
}

// settingsStored are the settings in force when the scenario's session was
// stored.
func (sc storedScenario) settingsStored() Settings {
	set := sc.set()
	s := NewSession(testKey)
	for _, st := range sc.build {
		st.do.run(s, t0.Add(st.at), &set)
	}
	return set
}

// TestStoredScenarios drives each scenario, stores the session, restores
// it and goes on: what happens, before and after the restart, must be what
// the transcript recorded.
func TestStoredScenarios(t *testing.T) {
	for _, sc := range storedScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			set := sc.set()
			s := NewSession(testKey)
			var got []string
			for _, st := range sc.build {
				got = append(got, transcribe(t, s, &set, st)...)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			s = restore(t, s)
			got = append(got, "-- stored and restored --")
			got = append(got, goOn(t, s, &set, sc.after)...)
			if *updateStored {
				writeStored(t, sc.name, b, got)
				return
			}
			want := readLines(t, filepath.Join("testdata", "stored", sc.name+".txt"))
			diffLines(t, got, want)
			current := filepath.Join("testdata", "stored", storedDir(t, b), sc.name+".json")
			if pinned, err := os.ReadFile(current); err != nil || string(pinned) != string(b)+"\n" {
				t.Errorf("the stored form changed (%v):\n%s\nwas\n%s\nGive it a new version and a migration; then rewrite with -update-stored.", err, b, pinned)
			}
		})
	}
}

// TestCloneSharesNothing: a clone stays as its session was while the
// session goes on, and then goes on exactly as the session did.
func TestCloneSharesNothing(t *testing.T) {
	for _, sc := range storedScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			set := sc.set()
			s := NewSession(testKey)
			for _, st := range sc.build {
				transcribe(t, s, &set, st)
			}
			was, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			c, setC := s.Clone(), set
			setC.Delays = slices.Clone(set.Delays)
			wantAfter := goOn(t, s, &set, sc.after)
			if b, err := json.Marshal(c); err != nil || string(b) != string(was) {
				t.Fatalf("the clone changed with its session (%v):\n%s\nwas\n%s", err, b, was)
			}
			diffLines(t, goOn(t, c, &setC, sc.after), wantAfter)
		})
	}
}

// TestStoredFormsOfEarlierReleases restores the form each release stored
// of every scenario: the session must go on exactly as the transcript
// recorded, the scenario's own or, for a release whose sessions knew less,
// the one beside the form (what the release after it did with that form).
func TestStoredFormsOfEarlierReleases(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "stored", "v*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no stored forms under testdata/stored: %v", err)
	}
	for _, sc := range storedScenarios() {
		for _, dir := range dirs {
			t.Run(filepath.Base(dir)+"/"+sc.name, func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(dir, sc.name+".json"))
				if errors.Is(err, os.ErrNotExist) {
					t.Skip("no such scenario in this release's forms")
				}
				if err != nil {
					t.Fatal(err)
				}
				want := readLines(t, filepath.Join("testdata", "stored", sc.name+".txt"))
				want = want[indexOf(t, want, "-- stored and restored --")+1:]
				if _, err := os.Stat(filepath.Join(dir, sc.name+".txt")); err == nil {
					want = readLines(t, filepath.Join(dir, sc.name+".txt"))
				}
				s := NewSession(Key{})
				if err := json.Unmarshal(b, s); err != nil {
					t.Fatalf("restore %s: %v", b, err)
				}
				set := sc.settingsStored()
				diffLines(t, goOn(t, s, &set, sc.after), want)
			})
		}
	}
}

// goOn reports what the restored session shows, then runs steps on it.
func goOn(t *testing.T, s *Session, set *Settings, steps []step) []string {
	t.Helper()
	st, until := s.State()
	out := []string{fmt.Sprintf("state %q until %s note %q", st, stampOrNone(until), s.Note())}
	at, ok := s.NextWake()
	if !ok {
		at = time.Time{}
	}
	out = append(out, "next wake "+stampOrNone(at))
	done := classify.Event{Kind: classify.TurnDone}
	turnA := classify.Event{Kind: classify.TurnDone, ID: "turn A"}
	out = append(out, fmt.Sprintf("a turn's end repeats: unnamed from midway %v, unnamed %v, turn A %v",
		s.Repeats(done, true), s.Repeats(done, false), s.Repeats(turnA, false)))
	for _, st := range steps {
		out = append(out, transcribe(t, s, set, st)...)
	}
	return out
}

// transcribe runs one step and writes its actions, with the ledger's name
// for each continuation issued.
func transcribe(t *testing.T, s *Session, set *Settings, st step) []string {
	t.Helper()
	out := []string{fmt.Sprintf("at %s %s:", offset(t0.Add(st.at)), st.do.name)}
	for _, a := range st.do.run(s, t0.Add(st.at), set) {
		line := render(t, s, a)
		if in, ok := a.(Inject); ok {
			line += " for " + in.Episode
		}
		out = append(out, "\t"+line)
	}
	return out
}

func stampOrNone(at time.Time) string {
	if at.IsZero() {
		return "none"
	}
	return offset(at)
}

// storedDir is the folder of a stored form's version: v0 for the
// unversioned forms.
func storedDir(t *testing.T, b []byte) string {
	t.Helper()
	var v struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("v%d", v.V)
}

func writeStored(t *testing.T, name string, b []byte, transcript []string) {
	t.Helper()
	dir := filepath.Join("testdata", "stored", storedDir(t, b))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(transcript, "\n") + "\n"
	if err := os.WriteFile(filepath.Join("testdata", "stored", name+".txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func indexOf(t *testing.T, lines []string, line string) int {
	t.Helper()
	for i, l := range lines {
		if l == line {
			return i
		}
	}
	t.Fatalf("no line %q", line)
	return -1
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	if !equal(got, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRestoreDamagedForms feeds stored forms that break one invariant each
// (Session): a pending continuation that breaks one is dropped and the rest
// restored; any other break refuses the form and leaves the session as it
// was.
func TestRestoreDamagedForms(t *testing.T) {
	type form = map[string]any
	sub := func(f form, key string) form { return f[key].(form) }
	cases := []struct {
		name   string
		base   string // a scenario's form under testdata/stored/v1
		damage func(form)
		refuse bool
	}{
		{"retry pending without its episode", "pending-retry", func(f form) { delete(f, "episode") }, false},
		{"retry pending after nudge gave up", "pending-retry", func(f form) { sub(f, "episode")["over"] = true }, false},
		{"retry pending out of turn", "pending-retry", func(f form) { sub(f, "pending")["attempt"] = 2 }, false},
		{"a fourth attempt pending", "pending-retry", func(f form) {
			sub(f, "episode")["attempts"] = 3
			sub(f, "pending")["attempt"] = 4
		}, false},
		{"limit continuation pending without its limit", "limit-continue-pending", func(f form) { delete(f, "limit") }, false},
		{"limit continuation pending after it fired", "limit-continue-pending", func(f form) { sub(f, "limit")["fired"] = true }, false},
		{"limit continuation pending as attempt 2", "limit-continue-pending", func(f form) { sub(f, "pending")["attempt"] = 2 }, false},
		{"pending for something unknown", "pending-retry", func(f form) { sub(f, "pending")["for"] = "fun" }, false},
		{"pending without a due time", "pending-retry", func(f form) { delete(sub(f, "pending"), "at") }, false},
		{"held without a gap", "held-by-box", func(f form) { delete(sub(f, "pending"), "gap") }, false},
		{"a gap while not held", "held-by-box", func(f form) { delete(sub(f, "pending"), "held_since") }, false},
		{"an episode with -1 attempts", "gave-up", func(f form) { sub(f, "episode")["attempts"] = -1 }, true},
		{"an episode with 4 attempts", "gave-up", func(f form) { sub(f, "episode")["attempts"] = 4 }, true},
		{"an episode and a usage limit", "limit-continue-pending", func(f form) {
			f["episode"] = form{"id": "retry 2026-11-30T08:59:59Z", "attempts": 0}
		}, true},
		{"a continuation issued as attempt 0", "sent-echoed", func(f form) { sub(f, "sent")["attempt"] = 0 }, true},
		{"a continuation issued for something unknown", "sent-echoed", func(f form) { sub(f, "sent")["for"] = "" }, true},
		{"an unknown state", "pending-retry", func(f form) { f["state"] = "sleeping" }, true},
		{"a named ending of an open turn", "turn-done", func(f form) { f["turn_ended"] = false }, true},
		{"a version from a later release", "pending-retry", func(f form) { f["v"] = storedVersion + 1 }, true},
		{"a negative version", "pending-retry", func(f form) { f["v"] = -1 }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "stored", "v1", c.base+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var f form
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			c.damage(f)
			if b, err = json.Marshal(f); err != nil {
				t.Fatal(err)
			}
			s := run(t, testSettings(), []step{{0, fail(pe, err500), schedule1}})
			before, _ := json.Marshal(s)
			err = json.Unmarshal(b, s)
			after, _ := json.Marshal(s)
			if c.refuse {
				if err == nil {
					t.Fatalf("restored %s", b)
				}
				if string(after) != string(before) {
					t.Fatalf("a refused form changed the session:\n%s\nwas\n%s", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused %s: %v", b, err)
			}
			if err := s.invariants(); err != nil {
				t.Fatal(err)
			}
			if s.pending != nil {
				t.Fatalf("the broken pending continuation was kept: %+v", *s.pending)
			}
			if st, _ := s.State(); st == "" || s.project != testProject {
				t.Fatalf("the rest was not restored: %s", after)
			}
			set := testSettings()
			runOn(t, s, &set, []step{{time.Hour, tick, nil}})
		})
	}
}
