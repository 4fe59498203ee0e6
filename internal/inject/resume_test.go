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
	"testing"
)

func TestResumeRunsTheAgentsOwnCommand(t *testing.T) {
	want := map[string][]string{
		"claude":    {"--resume", "S-1", "-p"},
		"codex":     {"exec", "--skip-git-repo-check", "resume", "S-1"},
		"kimi":      {"--session", "S-1", "--print", "-p"},
		"kimi_code": {"--session", "S-1", "-p"},
		"opencode":  {"run", "--session", "S-1"},
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
		rec := recs[program[agent]]
		before := len(rec.calls())
		d, err := inj.Deliver(ctx, Target{Agent: agent, Session: "S-1", Project: project,
			Hint: Hint{Agent: agent, Session: "S-1", Project: project, Executables: []string{"nudge-no-such-agent"}}}, text)
		if err != nil {
			t.Fatalf("%s: Deliver: %v", agent, err)
		}
		if d != (Delivery{Backend: "resume", Where: agent + " S-1"}) {
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
	target := Target{Agent: "claude", Session: "S-2", Project: project,
		Hint: Hint{Agent: "claude", Session: "S-2", Project: project, Executables: []string{"nudgeresumed"}}}
	ctx := context.Background()
	on := NewResume(map[string]bool{"claude": true}, slog.New(slog.DiscardHandler))

	for what, c := range map[string]struct {
		r *Resume
		t Target
	}{
		"off for the agent":       {NewResume(map[string]bool{"claude": false}, slog.New(slog.DiscardHandler)), target},
		"an agent without resume": {on, Target{Agent: "grok", Session: "S-2", Project: project}},
		"a live process named":    {on, Target{Agent: "claude", Session: "S-2", Project: project, PID: os.Getpid(), Hint: target.Hint}},
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

	w := Where{Server: "claude", Pane: "S-2", Dir: project}
	if err := on.Send(ctx, w, "--dangerously-skip-permissions"); err == nil {
		t.Error("Send(text starting with -) succeeded")
	}
	if calls := rec.calls(); len(calls) != 0 {
		t.Errorf("claude ran: %+v", calls)
	}
}
