package advice

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"nudge/internal/classify"
)

func init() { time.Local = time.UTC } // Clock writes local time

var (
	due   = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	place = "tmux /tmp/tmux-1000/default %3"
)

// every Why the daemon and the retry machine give.
func everyWhy() []Why {
	return []Why{
		{Cause: TypingFailed, Place: place}, {Cause: TypingFailed},
		{Cause: Unreachable}, {Cause: Unreachable, PID: 4242}, {Cause: NoScreen, Place: "screen 4242.pts-1 0"},
		{Cause: Ambiguous}, {Cause: Gone}, {Cause: NotIdle, PID: 4242, Place: place},
		{Cause: BoxOpen, Box: "permission prompt", For: time.Hour}, {Cause: BoxOpen, For: 90 * time.Second},
		{Cause: Busy, For: time.Hour}, {Cause: Refused}, {Cause: Stopped}, {Cause: Repeated},
		{Cause: Cut, Place: place}, {Cause: CutBeforeEnter, Place: place}, {Cause: TooLate, Due: due},
	}
}

// plain checks what the person reads: one sentence that ends with what to
// do, parentheses never nested, no clause said twice, and no agent named
// but agent.
func plain(t *testing.T, agent classify.Agent, text string) {
	t.Helper()
	if !strings.HasSuffix(text, ".") || strings.Count(text, ". ") > 0 || strings.Contains(text, "\n") {
		t.Errorf("not one sentence: %q", text)
	}
	depth := 0
	for _, r := range text {
		switch r {
		case '(':
			if depth++; depth > 1 {
				t.Errorf("nested parentheses: %q", text)
			}
		case ')':
			depth--
		}
	}
	seen := map[string]bool{}
	for _, clause := range strings.FieldsFunc(strings.TrimSuffix(text, "."), func(r rune) bool { return r == ';' || r == ':' || r == ',' }) {
		clause = strings.TrimSpace(clause)
		if seen[clause] {
			t.Errorf("%q says %q twice", text, clause)
		}
		seen[clause] = true
	}
	for _, other := range classify.Agents() {
		if other.Name != agent.Name && !strings.Contains(agent.Title, other.Title) && strings.Contains(text, other.Title) {
			t.Errorf("a %s message names %s: %q", agent.Title, other.Title, text)
		}
	}
	last := text[strings.LastIndex(text, ";")+1:]
	if !strings.Contains(last, "type continue") && !strings.Contains(last, "press Enter") && !strings.Contains(last, "check the prompt") &&
		!strings.Contains(last, "continue the session") && !strings.Contains(last, "continues") {
		t.Errorf("no action at the end: %q", text)
	}
}

func TestEveryMessageIsOnePlainSentenceWithItsAction(t *testing.T) {
	for _, agent := range classify.Agents() {
		for _, w := range everyWhy() {
			plain(t, agent, Undelivered(agent.Name, w))
		}
		plain(t, agent, SignIn(agent.Name, ""))
		for _, l := range []Limit{{}, {Reset: due}, {Reset: due, ContinueAt: due.Add(time.Minute)},
			{Reset: due, ContinueAt: due.Add(time.Minute), Paused: true}, {Reset: due, AgentContinues: true}} {
			plain(t, agent, UsageLimit(agent.Name, l))
		}
		plain(t, agent, GaveUp(agent.Name, 3, "API Error: 529 Overloaded"))
		plain(t, agent, GaveUp(agent.Name, 1, ""))
	}
}

// A continuation that found no terminal says so once, for the session's
// own agent, and says how to run the agent so that nudge can type into it.
func TestUnreachableSaysHowToRunTheAgent(t *testing.T) {
	got := Undelivered("claude", Why{Cause: Unreachable})
	want := "nudge could not continue Claude Code: it found no running process of this session in a terminal it can type into; " +
		"continue the session yourself, and start Claude Code as `nudge wrap -- claude` or in tmux or screen so that nudge can next time."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := Undelivered("codex", Why{Cause: Unreachable, PID: 77}); !strings.Contains(got, "its process 77 runs in no terminal") ||
		!strings.Contains(got, "`nudge wrap -- codex`") {
		t.Errorf("codex with a known process: %q", got)
	}
}

func TestSignInUsesTheAgentsOwnHint(t *testing.T) {
	for _, a := range classify.Agents() {
		if got := SignIn(a.Name, "something else"); a.LoginHint != "" && !strings.Contains(got, strings.TrimSuffix(a.LoginHint, ".")) {
			t.Errorf("%s: %q lacks the registry's hint %q", a.Name, got, a.LoginHint)
		}
	}
	if got, want := SignIn("claude", ""), "Claude Code needs you to sign in again: run `claude /login` (or fix ANTHROPIC_API_KEY), then type continue in the session."; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := SignIn("unregistered", "log in with `x auth`"); got != "unregistered needs you to sign in again: log in with `x auth`, then type continue in the session." {
		t.Errorf("an unknown agent's own hint: %q", got)
	}
}

func TestUsageLimitSaysTheResetAndWhatFollows(t *testing.T) {
	for _, c := range []struct {
		l    Limit
		want string
	}{
		{Limit{Reset: due}, "Claude Code reached its usage limit, which resets at 09:00 UTC, Mon 30 Nov; type continue in the session after it, or turn on Continue after usage limit."},
		{Limit{Reset: due, ContinueAt: due.Add(time.Minute)}, "Claude Code reached its usage limit, which resets at 09:00 UTC, Mon 30 Nov; nudge continues the session at 09:01."},
		{Limit{Reset: due, ContinueAt: due.Add(time.Minute), Paused: true}, "Claude Code reached its usage limit, which resets at 09:00 UTC, Mon 30 Nov; nudge continues the session after it once nudge is resumed."},
		{Limit{Reset: due, AgentContinues: true}, "Claude Code reached its usage limit, which resets at 09:00 UTC, Mon 30 Nov; Claude Code continues by itself after it."},
		{Limit{}, "Claude Code reached its usage limit and did not say when it resets; type continue in the session once it has."},
	} {
		if got := UsageLimit("claude", c.l); got != c.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", c.l, got, c.want)
		}
	}
}

// A Why travels as an error, through wrapping; another error is a terminal
// that refused the keys.
func TestWhyOf(t *testing.T) {
	w := Why{Cause: Gone, PID: 9}
	if got := WhyOf(fmt.Errorf("deliver: %w", w)); got != w {
		t.Errorf("WhyOf(wrapped) = %+v", got)
	}
	if got := WhyOf(errors.New("exit status 1")); got.Cause != TypingFailed {
		t.Errorf("WhyOf(other) = %+v", got)
	}
	if !strings.HasPrefix(w.Error(), "nudge could not continue the agent:") {
		t.Errorf("Error() = %q", w.Error())
	}
}
