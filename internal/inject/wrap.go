package inject

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"nudge/internal/config"
	"nudge/internal/wrap"

	"nudge/internal/proc"
)

// Wrap types into the pseudo-terminal of a `nudge wrap` that runs the agent:
// the wrapper writes the text to its terminal itself, so no terminal
// emulator has to cooperate.
type Wrap struct {
	dataDir string
}

var (
	_ Backend  = (*Wrap)(nil)
	_ Attender = (*Wrap)(nil)
)

// NewWrap returns the backend for the wrappers whose sockets are in
// dataDir (wrap.Dir).
func NewWrap(dataDir string) *Wrap { return &Wrap{dataDir: dataDir} }

// Name is "wrap".
func (*Wrap) Name() string { return "wrap" }

// askTimeout bounds one wrapper's answer while locating; a wrapper that
// does not answer in time is passed over.
const askTimeout = 2 * time.Second

// Locate asks every running wrapper what it runs and picks the one whose
// command is the agent process, or an ancestor of it, or whose terminal is
// the agent's.
func (x *Wrap) Locate(ctx context.Context, t Target) (Where, error) {
	agent, err := agentProcess(t)
	if err != nil {
		return Where{}, err
	}
	socks, err := wrap.Sockets(x.dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return Where{}, refuse(ErrNotInTerminal, "no nudge wrap has run")
	}
	if err != nil {
		return Where{}, err
	}
	var unanswered []string
	for _, sock := range socks {
		actx, cancel := context.WithTimeout(ctx, askTimeout)
		info, err := wrap.NewClient(sock).Who(actx)
		cancel()
		if err != nil {
			if !errors.Is(err, wrap.ErrNotRunning) {
				unanswered = append(unanswered, err.Error())
			}
			continue
		}
		if wraps(info, agent) == nil {
			return Where{Server: sock, Pane: info.TTY, PID: agent.PID, Started: agent.Started, PanePID: info.ChildPID}, nil
		}
	}
	if len(unanswered) > 0 {
		return Where{}, refuse(ErrNotInTerminal, "no nudge wrap runs pid %d (no answer from: %s)", t.PID, strings.Join(unanswered, "; "))
	}
	return Where{}, refuse(ErrNotInTerminal, "no nudge wrap runs pid %d", t.PID)
}

// Send re-asks the wrapper (still there, same command, the agent process
// the same by pid and start time and still its), then has it type text and
// Enter.
func (x *Wrap) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	c := wrap.NewClient(w.Server)
	info, err := c.Who(ctx)
	if errors.Is(err, wrap.ErrNotRunning) {
		return refuse(ErrGone, "nudge wrap %s is gone", w.Server)
	}
	if err != nil {
		return err
	}
	if info.ChildPID != w.PanePID {
		return refuse(ErrOtherProcess, "nudge wrap %s now belongs to another process (pid %d, was %d)", w.Server, info.ChildPID, w.PanePID)
	}
	agent, err := sameRun(w, "nudge wrap "+w.Server)
	if err != nil {
		return err
	}
	if err := wraps(info, agent); err != nil {
		return err
	}
	err = c.Type(ctx, w.PanePID, text, PresentFor, pasteSettleOf(ctx))
	switch {
	case errors.Is(err, wrap.ErrInUse):
		return refuse(ErrPresent, "nudge wrap %s: the person started typing as nudge was about to; nothing typed", w.Server)
	case errors.Is(err, wrap.ErrNotRunning), errors.Is(err, wrap.ErrChildGone):
		return refuse(ErrGone, "nudge wrap %s is gone", w.Server)
	case errors.Is(err, wrap.ErrOtherChild):
		return refuse(ErrOtherProcess, "nudge wrap %s now belongs to another process", w.Server)
	}
	return err
}

// Attended tells the person's last key in the wrapper and whether they
// left keys unsent: the wrapper sees every key.
func (x *Wrap) Attended(ctx context.Context, w Where) (Attention, error) {
	info, err := wrap.NewClient(w.Server).Who(ctx)
	if err != nil {
		return Attention{}, err
	}
	return Attention{LastKey: info.LastKey, Unsent: info.Unsent}, nil
}

// wraps checks that the wrapper info runs agent: agent is its command or
// descends from it, or is on its terminal.
func wraps(info wrap.Info, agent proc.Process) error {
	under, err := descendsFrom(agent.PID, info.ChildPID)
	if err != nil {
		return fmt.Errorf("nudge wrap %d: %w", info.PID, err)
	}
	if under {
		return nil
	}
	if same, err := proc.OnTTY(agent, info.TTY); err == nil && same {
		return nil
	}
	return refuse(ErrOtherProcess, "nudge wrap %d now belongs to another process (pid %d is neither under %d nor on %s)", info.PID, agent.PID, info.ChildPID, info.TTY)
}

func init() {
	register(registration{
		name: "wrap", rank: rankWrap,
		// Always: a wrapper may start after the daemon.
		available: func(Options) bool { return true },
		build:     func(Options) Backend { return NewWrap(config.DataDir()) },
	})
}
