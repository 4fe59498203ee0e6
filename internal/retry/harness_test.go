package retry

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"nudge/internal/advice"
	"nudge/internal/classify"
)

// The messages write local time (advice.Clock); these tests read it as UTC.
func init() { time.Local = time.UTC }

// t0 is the fake clock's start; every time in a test is an offset from it.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var testKey = Key{Agent: "testagent", Session: "s1"}

const (
	testProject = "/home/dev/project"
	testMessage = "go on"
	err500      = "API Error: 500 Internal server error"
	err529      = "API Error: 529 Overloaded"
)

// testSettings are the defaults with a short continuation text.
func testSettings() Settings {
	set := DefaultSettings()
	set.Message = testMessage
	return set
}

// step is one call into the machine at t0+at and the exact actions it must return.
type step struct {
	at   time.Duration
	do   call
	want []string
}

// call is one call into the machine; it may change the settings. ev
// builds the event of a call that observes one.
type call struct {
	name string
	run  func(s *Session, now time.Time, set *Settings) []Action
	ev   func(now time.Time) classify.Event
}

// run drives a fresh session through steps on a fake clock and asserts the
// exact actions of each step.
func run(t *testing.T, set Settings, steps []step) *Session {
	t.Helper()
	s := NewSession(testKey)
	runOn(t, s, &set, steps)
	return s
}

func runOn(t *testing.T, s *Session, set *Settings, steps []step) {
	t.Helper()
	for i, st := range steps {
		got := renderAll(t, s, st.do.run(s, t0.Add(st.at), set))
		if err := s.invariants(); err != nil {
			t.Fatalf("step %d (%s at %s) broke an invariant: %v", i, st.do.name, offset(t0.Add(st.at)), err)
		}
		if !equal(got, st.want) {
			t.Fatalf("step %d (%s at %s):\ngot:\n\t%s\nwant:\n\t%s", i, st.do.name, offset(t0.Add(st.at)),
				strings.Join(got, "\n\t"), strings.Join(st.want, "\n\t"))
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// renderAll writes each action as one line, checking the fields every
// action must carry.
func renderAll(t *testing.T, s *Session, acts []Action) []string {
	t.Helper()
	var out []string
	for _, a := range acts {
		out = append(out, render(t, s, a))
	}
	return out
}

func render(t *testing.T, s *Session, a Action) string {
	t.Helper()
	var key Key
	var line string
	switch a := a.(type) {
	case Decision:
		key, line = a.Key, "decide: "+a.What
		if a.Step != "" {
			line = "decide[" + string(a.Step) + "]: " + a.What
		}
	case SetState:
		key, line = a.Key, "state "+string(a.State)
		if !a.Until.IsZero() {
			line += " until " + offset(a.Until)
		}
		if a.Note != "" {
			line += " (" + a.Note + ")"
		}
	case Wake:
		key, line = a.Key, "wake "+offset(a.At)
	case Inject:
		key, line = a.Key, fmt.Sprintf("inject #%d %q", a.Attempt, a.Text)
	case Entry:
		key = a.Key
		line = fmt.Sprintf("entry %q %s %q attempts=%d", a.What, a.Failure.Class, a.Failure.Message, a.Attempts)
		if a.Latest != nil {
			line += fmt.Sprintf(" latest=%q", a.Latest.Message)
		}
		if a.Project != s.project {
			t.Errorf("entry project %q, want %q", a.Project, s.project)
		}
	case Notify:
		key, line = a.Key, fmt.Sprintf("notify %q %q", a.Title, a.Body)
		if a.Project != s.project {
			t.Errorf("notify project %q, want %q", a.Project, s.project)
		}
	default:
		t.Fatalf("unknown action %#v", a)
	}
	if key != testKey {
		t.Errorf("%s: key %v, want %v", line, key, testKey)
	}
	return line
}

// gaveUp are the lines of giving up on the dead turn of err500 with what,
// after attempts continuations: the decision, the Inbox entry (with the
// episode's latest error when it differs), the notification and the state.
func gaveUp(what string, attempts int, latest string) []string {
	entry := fmt.Sprintf("entry %q provider_error %q attempts=%d", what, err500, attempts)
	if latest != "" {
		entry += fmt.Sprintf(" latest=%q", latest)
	}
	return []string{
		"decide[told]: told the person: " + what,
		entry,
		fmt.Sprintf("notify %q %q", "testagent needs attention", testProject+": "+what+" — "+err500),
		"state gave_up (" + what + ")",
	}
}

// offset writes an instant as its distance from t0 ("+10s", "+3h").
func offset(at time.Time) string {
	d := at.Sub(t0)
	if d < 0 {
		return "-" + advice.Span(-d)
	}
	return "+" + advice.Span(d)
}

// event builds an event of kind recorded one second before it is observed.
func event(kind classify.Kind, opts ...func(*classify.Event)) call {
	build := func(now time.Time) classify.Event {
		ev := classify.Event{Agent: testKey.Agent, Session: testKey.Session, Project: testProject,
			Time: now.Add(-time.Second), Kind: kind}
		for _, o := range opts {
			o(&ev)
		}
		return ev
	}
	return call{name: string(kind), ev: build, run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Observe(build(now), now, *set)
	}}
}

// backlog observes c's event as one written while nudge was not running.
func backlog(c call) call {
	return call{name: "backlog " + c.name, ev: c.ev, run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.ObserveBacklog(c.ev(now), now, *set)
	}}
}

// fail is a dead turn of class with message.
func fail(class classify.Class, message string, opts ...func(*classify.Event)) call {
	f := func(ev *classify.Event) { ev.Failure = &classify.Failure{Class: class, Message: message} }
	c := event(classify.TurnFailed, append([]func(*classify.Event){f}, opts...)...)
	c.name = "dead turn " + string(class)
	return c
}

// recorded sets the record's own time.
func recorded(at time.Time) func(*classify.Event) {
	return func(ev *classify.Event) { ev.Time = at }
}

// resetAt sets a usage limit's reset time.
func resetAt(at time.Time) func(*classify.Event) {
	return func(ev *classify.Event) { ev.Failure.ResetAt = at }
}

func typed(text string) call {
	c := event(classify.UserMessage, func(ev *classify.Event) { ev.Text = text })
	c.name = "user message " + text
	return c
}

func process(status, waiting string) func(*classify.Event) {
	return func(ev *classify.Event) { ev.Process = &classify.Process{PID: 555, Status: status, Waiting: waiting} }
}

var tick = call{name: "tick", run: func(s *Session, now time.Time, set *Settings) []Action {
	return s.Tick(now, *set)
}}

func delivered(attempt int, err error) call {
	return call{name: fmt.Sprintf("delivered #%d %v", attempt, err), run: func(s *Session, now time.Time, set *Settings) []Action {
		return s.Delivered(attempt, err, now, *set)
	}}
}

func reconfigure(change func(*Settings)) call {
	return call{name: "reconfigure", run: func(s *Session, now time.Time, set *Settings) []Action {
		change(set)
		return s.Reconfigure(now, *set)
	}}
}

// restore stores the session as JSON and replaces it with what comes back,
// the way the daemon survives a restart.
func restore(t *testing.T, s *Session) *Session {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("marshal session: %v", err)
	}
	var back Session
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal session %s: %v", b, err)
	}
	return &back
}
