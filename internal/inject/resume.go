package inject

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"

	"nudge/internal/classify"
)

// resumeCommand is the agent's headless resume command, if it has one.
func resumeCommand(agent string) (*classify.ResumeCommand, bool) {
	a, ok := classify.Lookup(agent)
	return a.Resume, ok && a.Resume != nil
}

// Resume continues a session that no live process holds by running the
// agent's own headless resume command in the session's folder, for the
// agents the person enabled (inject.resume). The turn runs unattended, in
// the background: nudge sees its outcome in the session's records like
// any other turn. It never runs while a process might hold the session
// (two writers on one transcript).
type Resume struct {
	enabled map[string]bool
	log     *slog.Logger
}

// NewResume returns the headless backend for the agents enabled says.
func NewResume(enabled map[string]bool, log *slog.Logger) *Resume {
	return &Resume{enabled: enabled, log: log}
}

func init() {
	register(registration{
		name: "resume", rank: rankResume,
		available: func(o Options) bool {
			for agent, on := range o.Resume {
				if _, ok := resumeCommand(agent); on && ok {
					return true
				}
			}
			return false
		},
		build: func(o Options) Backend { return NewResume(o.Resume, o.Log.With("stage", "resume")) },
	})
}

// Name is "resume".
func (*Resume) Name() string { return "resume" }

// Locate accepts a session of an enabled agent only when no live process
// can hold it: the target names none, and FindProcess, which runs right
// before Send (Deliver calls them back to back), finds none either.
func (r *Resume) Locate(ctx context.Context, t Target) (Where, error) {
	if _, ok := resumeCommand(t.Agent); !ok {
		return Where{}, refuse(ErrNotInTerminal, "%s sessions cannot be continued headless", t.Agent)
	}
	if !r.enabled[t.Agent] {
		return Where{}, refuse(ErrNotInTerminal, "headless continuation is off for %s (inject.resume.%s)", t.Agent, t.Agent)
	}
	if t.Session == "" || t.Project == "" {
		return Where{}, refuse(ErrNotInTerminal, "the session's id or folder is not known")
	}
	if t.PID != 0 {
		return Where{}, refuse(ErrNotInTerminal, "a live process (pid %d) holds the session; headless only when none does", t.PID)
	}
	pid, err := FindProcess(ctx, t.Hint)
	switch {
	case err == nil:
		return Where{}, refuse(ErrNotInTerminal, "pid %d may hold the session; headless only when no process does", pid)
	case errors.Is(err, ErrAmbiguous):
		return Where{}, refuse(ErrNotInTerminal, "%s; headless only when no process does", err)
	case !errors.Is(err, ErrNoProcess):
		return Where{}, err
	}
	return Where{Server: t.Agent, Pane: t.Session, Dir: t.Project}, nil
}

// Send starts the agent's resume command with text as one argument and
// returns once it runs; its exit is logged. A session id not of the agent's
// shape is refused, and so is a text starting with "-" where the CLI would
// read it as an option.
func (r *Resume) Send(ctx context.Context, w Where, text string) error {
	c, ok := resumeCommand(w.Server)
	switch {
	case !ok:
		return fmt.Errorf("%s sessions cannot be continued headless", w.Server)
	case strings.TrimSpace(text) == "":
		return errors.New("empty continuation text")
	case c.TextOption && strings.HasPrefix(text, "-"):
		return errors.New("a continuation text starting with \"-\" would be read as an option; not sent headless")
	}
	if err := checkSession(w.Server, w.Pane); err != nil {
		return err
	}
	args := c.Argv(w.Pane, text)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = w.Dir
	out := &tail{max: 2000}
	cmd.Stdout, cmd.Stderr = out, out
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	// The turn may take minutes; it outlives the delivery.
	go func() {
		if err := cmd.Wait(); err != nil {
			r.log.Warn("headless continuation ended with an error", "agent", w.Server, "session", w.Pane, "err", err, "output", out.String())
			return
		}
		r.log.Info("headless continuation ended", "agent", w.Server, "session", w.Pane)
	}()
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = bytes.Clone(t.buf[over:])
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.buf) }
