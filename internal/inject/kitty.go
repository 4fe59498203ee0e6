package inject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Kitty types into the kitty window that holds the agent process through
// kitty's remote control (`kitty @ --to SOCKET`), which works only when the
// person enabled it: the agent's environment then carries KITTY_LISTEN_ON.
// The text goes on stdin (sent as is, no escape processing), as a bracketed
// paste when the application asked for one; then Enter as "\r".
type Kitty struct {
	program string
}

var _ Screener = (*Kitty)(nil)

// NewKitty returns the kitty backend, running the kitty found in PATH.
func NewKitty() *Kitty { return &Kitty{program: "kitty"} }

func init() {
	register(registration{
		name: "kitty", rank: rankKitty,
		available: func(Options) bool { return installed("kitty") },
		build:     func(Options) Backend { return NewKitty() },
	})
}

// Name is "kitty".
func (*Kitty) Name() string { return "kitty" }

// kittyOS is one OS window of `kitty @ ls`.
type kittyOS struct {
	Tabs []struct {
		Windows []kittyWindow `json:"windows"`
	} `json:"tabs"`
}

// kittyWindow is one kitty window: the process kitty started in it and the
// processes in its terminal's foreground.
type kittyWindow struct {
	ID         int            `json:"id"`
	PID        int            `json:"pid"`
	Foreground []kittyProcess `json:"foreground_processes"`
}

// kittyProcess is a process kitty lists for a window.
type kittyProcess struct {
	PID int `json:"pid"`
}

// Locate finds the window holding t.PID on the kitty instance named by the
// agent's KITTY_LISTEN_ON: the agent is a foreground process of the window
// or descends from the window's process.
func (x *Kitty) Locate(ctx context.Context, t Target) (Where, error) {
	agent, err := agentProcess(t)
	if err != nil {
		return Where{}, err
	}
	socket, ok, err := processEnv(t.PID, "KITTY_LISTEN_ON")
	if err != nil {
		return Where{}, fmt.Errorf("kitty remote control: %w", err)
	}
	if !ok {
		if _, inKitty, _ := processEnv(t.PID, "KITTY_WINDOW_ID"); inKitty {
			return Where{}, refuse(ErrNotInTerminal, "pid %d is in kitty, but kitty's remote control is off (no KITTY_LISTEN_ON; set allow_remote_control and listen_on)", t.PID)
		}
		return Where{}, refuse(ErrNotInTerminal, "pid %d is not in kitty (no KITTY_LISTEN_ON in its environment)", t.PID)
	}
	windows, err := x.windows(ctx, socket)
	if err != nil {
		return Where{}, err
	}
	windowVar, _, _ := processEnv(t.PID, "KITTY_WINDOW_ID")
	for _, win := range windows {
		if holdsAgent(win, agent.PID) {
			if id := strconv.Itoa(win.ID); windowVar != "" && windowVar != id {
				return Where{}, refuse(ErrOtherProcess, "kitty window %s holds pid %d, which was started in window %s", id, t.PID, windowVar)
			}
			return Where{Server: socket, Pane: strconv.Itoa(win.ID), PID: agent.PID, Started: agent.Started, PanePID: win.PID}, nil
		}
	}
	return Where{}, refuse(ErrNotInTerminal, "no kitty window at %s holds pid %d", socket, t.PID)
}

// Send re-verifies the window (still there, same window process, same agent
// process under it), then sends text and, once the window shows it, Enter.
func (x *Kitty) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := x.verify(ctx, w); err != nil {
		return err
	}
	match := "id:" + w.Pane
	return typeThenEnter(ctx, x, w, text, func() error {
		_, err := x.remote(ctx, w.Server, strings.NewReader(text), "send-text", "--match", match, "--bracketed-paste", "auto", "--stdin")
		return err
	}, func() error {
		// Without --stdin the text is read with Python escapes: `\r` is Enter.
		_, err := x.remote(ctx, w.Server, nil, "send-text", "--match", match, `\r`)
		return err
	})
}

// Screen returns the window's visible text (`kitty @ get-text`).
func (x *Kitty) Screen(ctx context.Context, w Where) (string, error) {
	return x.remote(ctx, w.Server, nil, "get-text", "--match", "id:"+w.Pane)
}

func (x *Kitty) verify(ctx context.Context, w Where) error {
	windows, err := x.windows(ctx, w.Server)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(windows, func(win kittyWindow) bool { return strconv.Itoa(win.ID) == w.Pane })
	if i < 0 {
		return refuse(ErrGone, "kitty window %s is gone", w.Pane)
	}
	if windows[i].PID != w.PanePID {
		return refuse(ErrOtherProcess, "kitty window %s now belongs to another process (pid %d, was %d)", w.Pane, windows[i].PID, w.PanePID)
	}
	if _, err := sameRun(w, "kitty window "+w.Pane); err != nil {
		return err
	}
	if !holdsAgent(windows[i], w.PID) {
		return refuse(ErrOtherProcess, "kitty window %s now belongs to another process (pid %d left it)", w.Pane, w.PID)
	}
	return nil
}

// holdsAgent reports whether pid runs in win: one of its foreground
// processes, or under the process kitty started in it.
func holdsAgent(win kittyWindow, pid int) bool {
	if slices.Contains(win.Foreground, kittyProcess{PID: pid}) {
		return true
	}
	if win.PID <= 1 {
		return false
	}
	under, err := descendsFrom(pid, win.PID)
	return err == nil && under
}

func (x *Kitty) windows(ctx context.Context, socket string) ([]kittyWindow, error) {
	out, err := x.remote(ctx, socket, nil, "ls")
	if err != nil {
		return nil, err
	}
	var oses []kittyOS
	if err := json.Unmarshal([]byte(out), &oses); err != nil {
		return nil, fmt.Errorf("kitty @ ls: %w", err)
	}
	var all []kittyWindow
	for _, o := range oses {
		for _, tab := range o.Tabs {
			all = append(all, tab.Windows...)
		}
	}
	return all, nil
}

// remote runs `kitty @ --to SOCKET ARGS`.
func (x *Kitty) remote(ctx context.Context, socket string, stdin io.Reader, args ...string) (string, error) {
	return runProgram(ctx, nil, stdin, x.program, append([]string{"@", "--to", socket}, args...)...)
}
