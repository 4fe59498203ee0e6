//go:build linux

package inject

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// sessions are real-shaped session ids of the agents that resume.
var sessions = map[string]string{
	"claude":    "11111111-1111-4111-8111-111111111111",
	"codex":     "01a22baa-0557-7581-9c35-d25741d23cf9",
	"kimi":      "7c0f3b2e-4d1a-4e8b-9f6c-2a5d8e1b3c70",
	"kimi_code": "session_78244af2-7075-4dee-9363-c042bef5bb50",
	"opencode":  "ses_dd44a27b2ffeJB7OXPK95HKcGs",
}

func TestResumeRunsTheAgentsOwnCommand(t *testing.T) {
	want := map[string][]string{
		"claude":    {"--resume", sessions["claude"], "-p", "--"},
		"codex":     {"exec", "--skip-git-repo-check", "resume", "--", sessions["codex"]},
		"kimi":      {"--session=" + sessions["kimi"], "--print", "-p"},
		"kimi_code": {"--session=" + sessions["kimi_code"], "-p"},
		"opencode":  {"run", "--session", sessions["opencode"], "--"},
	}
	program := map[string]string{"claude": "claude", "codex": "codex", "kimi": "kimi", "kimi_code": "kimi", "opencode": "opencode"}
	recs := map[string]*recorder{}
	for _, p := range []string{"claude", "codex", "kimi", "opencode"} {
		recs[p] = standIn(t, p, "")
	}
	enabled := map[string]bool{}
	for agent := range want {
		enabled[agent] = true
	}
	inj := New(NewResume(enabled, slog.New(slog.DiscardHandler)))
	ctx := context.Background()
	for agent, args := range want {
		project := t.TempDir()
		text := hostile[0] + "\n" + hostile[1]
		if agent != "kimi" {
			text = "--dangerously-skip-permissions " + text // after "--", or -p's value: the prompt
		}
		rec := recs[program[agent]]
		before := len(rec.calls())
		id := sessions[agent]
		d, err := inj.Deliver(ctx, Target{Agent: agent, Session: id, Project: project,
			Hint: Hint{Agent: agent, Session: id, Project: project, Executables: []string{"nudge-no-such-agent"}}}, text)
		if err != nil {
			t.Fatalf("%s: Deliver: %v", agent, err)
		}
		if d != (Delivery{Backend: "resume", Where: agent + " " + id}) {
			t.Errorf("%s: Delivery = %+v", agent, d)
		}
		waitFor(t, agent+" resumed", func() bool {
			_, err := os.Stat(filepath.Join(rec.dir, "call."+strconv.Itoa(before), "stdin"))
			return err == nil
		})
		// argv and cwd are written before stdin is opened.
		c := rec.calls()[before]
		argvIs(t, agent, c.argv, append(args, text)...)
		if c.cwd != project {
			t.Errorf("%s ran in %s, want the project %s", agent, c.cwd, project)
		}
	}
}

func TestResumeRefuses(t *testing.T) {
	rec := standIn(t, "claude", "")
	project := t.TempDir()
	id := sessions["claude"]
	target := Target{Agent: "claude", Session: id, Project: project,
		Hint: Hint{Agent: "claude", Session: id, Project: project, Executables: []string{"nudgeresumed"}}}
	ctx := context.Background()
	on := NewResume(map[string]bool{"claude": true}, slog.New(slog.DiscardHandler))

	for what, c := range map[string]struct {
		r *Resume
		t Target
	}{
		"off for the agent":       {NewResume(map[string]bool{"claude": false}, slog.New(slog.DiscardHandler)), target},
		"an agent without resume": {on, Target{Agent: "grok", Session: "6f1c", Project: project}},
		"a live process named":    {on, Target{Agent: "claude", Session: id, Project: project, PID: os.Getpid(), Hint: target.Hint}},
	} {
		if _, err := c.r.Locate(ctx, c.t); !errors.Is(err, ErrNotInTerminal) {
			t.Errorf("Locate(%s) = %v, want ErrNotInTerminal", what, err)
		}
	}

	agentNamed(t, "nudgeresumed", project, nil)
	if _, err := on.Locate(ctx, target); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "may hold the session") {
		t.Errorf("Locate(an agent process runs in the project) = %v", err)
	}
	agentNamed(t, "nudgeresumed", project, nil)
	if _, err := on.Locate(ctx, target); !errors.Is(err, ErrNotInTerminal) || !strings.Contains(err.Error(), "more than one") {
		t.Errorf("Locate(two agent processes run in the project) = %v", err)
	}

	// Session ids from records that are not the agent's, an option
	// among them, are never put on its command line.
	empty := t.TempDir()
	for _, bad := range []string{"--settings=/tmp/x", "-p", "S-2", "../x", "11111111-1111-4111-8111-111111111111 --x"} {
		bt := Target{Agent: "claude", Session: bad, Project: empty,
			Hint: Hint{Agent: "claude", Session: bad, Project: empty, Executables: []string{"nudgeresumed"}}}
		if _, err := New(on).Deliver(ctx, bt, "go on"); !errors.Is(err, ErrBadSession) {
			t.Errorf("Deliver(session %q) = %v, want ErrBadSession", bad, err)
		}
		if err := on.Send(ctx, Where{Server: "claude", Pane: bad, Dir: empty}, "go on"); !errors.Is(err, ErrBadSession) {
			t.Errorf("Send(session %q) = %v, want ErrBadSession", bad, err)
		}
		for _, f := range New(on).Explain(ctx, bt) {
			if !errors.Is(f.Err, ErrBadSession) {
				t.Errorf("Explain(session %q): %+v", bad, f)
			}
		}
	}
	// The legacy Kimi CLI takes the text as an option's value.
	kimi := NewResume(map[string]bool{"kimi": true}, slog.New(slog.DiscardHandler))
	if err := kimi.Send(ctx, Where{Server: "kimi", Pane: sessions["kimi"], Dir: empty}, "--yolo"); err == nil {
		t.Error("kimi: Send(text starting with -) succeeded")
	}
	if calls := rec.calls(); len(calls) != 0 {
		t.Errorf("claude ran: %+v", calls)
	}
}

// lockedText is a log's text, written from the goroutine that waits for a
// headless continuation.
type lockedText struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedText) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedText) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// How a headless continuation ended reaches the logger Build was given (the
// daemon's, nudge.log), with the agent's last output when it failed.
func TestResumeOutcomeIsLogged(t *testing.T) {
	standIn(t, "claude", `echo "API Error: 529 overloaded" >&2; exit 3`)
	var text lockedText
	inj, err := Build([]string{"resume"}, Options{Resume: map[string]bool{"claude": true}, Log: slog.New(slog.NewTextHandler(&text, nil))})
	if err != nil {
		t.Fatal(err)
	}
	project, id := t.TempDir(), sessions["claude"]
	if _, err := inj.Deliver(context.Background(), Target{Agent: "claude", Session: id, Project: project,
		Hint: Hint{Agent: "claude", Session: id, Project: project, Executables: []string{"nudge-no-such-agent"}}}, "go on"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the outcome in the log", func() bool {
		return strings.Contains(text.String(), "headless continuation ended with an error")
	})
	if got := text.String(); !strings.Contains(got, "stage=resume") || !strings.Contains(got, "529 overloaded") || !strings.Contains(got, id) {
		t.Errorf("log %q", got)
	}
}
