package inject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WezTerm types into the WezTerm pane on the agent's terminal through
// `wezterm cli` (its mux server's socket from the agent's
// WEZTERM_UNIX_SOCKET). The text goes on stdin as a paste (bracketed when
// the application asked for it), then Enter as a plain "\r".
type WezTerm struct {
	program string
}

var _ Screener = (*WezTerm)(nil)

// NewWezTerm returns the WezTerm backend, running the wezterm found in PATH.
func NewWezTerm() *WezTerm { return &WezTerm{program: "wezterm"} }

func init() {
	register(registration{
		name: "wezterm", rank: rankWezTerm,
		available: func(Options) bool { return installed("wezterm") },
		build:     func(Options) Backend { return NewWezTerm() },
	})
}

// Name is "wezterm".
func (*WezTerm) Name() string { return "wezterm" }

// weztermPane is one entry of `wezterm cli list --format json`.
type weztermPane struct {
	PaneID int    `json:"pane_id"`
	TTY    string `json:"tty_name"`
}

// Locate finds the pane whose terminal is the agent's; where the agent's
// environment can be read, its WEZTERM_PANE must name the same pane.
func (x *WezTerm) Locate(ctx context.Context, t Target) (Where, error) {
	agent, tty, err := agentOnTerminal(t)
	if err != nil {
		return Where{}, err
	}
	socket, _, _ := processEnv(t.PID, "WEZTERM_UNIX_SOCKET")
	paneVar, inWez, envErr := processEnv(t.PID, "WEZTERM_PANE")
	if envErr == nil && !inWez {
		return Where{}, refuse(ErrNotInTerminal, "pid %d is not in WezTerm (no WEZTERM_PANE in its environment)", t.PID)
	}
	if errors.Is(envErr, ErrGone) {
		return Where{}, envErr
	}
	panes, err := x.panes(ctx, socket)
	if err != nil {
		return Where{}, err
	}
	for _, p := range panes {
		if p.TTY != tty {
			continue
		}
		id := strconv.Itoa(p.PaneID)
		if inWez && paneVar != id {
			return Where{}, refuse(ErrOtherProcess, "WezTerm pane %s is on %s but pid %d was started in pane %s", id, tty, t.PID, paneVar)
		}
		return Where{Server: weztermServer(socket), Pane: id, PID: agent.PID, Started: agent.Started}, nil
	}
	return Where{}, refuse(ErrNotInTerminal, "no WezTerm pane is on %s (pid %d's terminal)", tty, t.PID)
}

// Send re-verifies the pane (still listed on the agent's terminal, same
// agent process), then pastes text and, once the pane shows it, presses
// Enter.
func (x *WezTerm) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := x.verify(ctx, w); err != nil {
		return err
	}
	return typeThenEnter(ctx, x, w, text, func() error {
		_, err := x.cli(ctx, w, strings.NewReader(text), "send-text", "--pane-id", w.Pane)
		return err
	}, func() error {
		_, err := x.cli(ctx, w, strings.NewReader("\r"), "send-text", "--pane-id", w.Pane, "--no-paste")
		return err
	})
}

// Screen returns the pane's visible text (`wezterm cli get-text`).
func (x *WezTerm) Screen(ctx context.Context, w Where) (string, error) {
	return x.cli(ctx, w, nil, "get-text", "--pane-id", w.Pane)
}

func (x *WezTerm) verify(ctx context.Context, w Where) error {
	panes, err := x.panes(ctx, weztermSocket(w.Server))
	if err != nil {
		return err
	}
	for _, p := range panes {
		if strconv.Itoa(p.PaneID) == w.Pane {
			return sameAgent(w, p.TTY)
		}
	}
	return refuse(ErrGone, "WezTerm pane %s is gone", w.Pane)
}

func (x *WezTerm) panes(ctx context.Context, socket string) ([]weztermPane, error) {
	out, err := x.cli(ctx, Where{Server: weztermServer(socket)}, nil, "list", "--format", "json")
	if err != nil {
		return nil, err
	}
	var panes []weztermPane
	if err := json.Unmarshal([]byte(out), &panes); err != nil {
		return nil, fmt.Errorf("wezterm cli list: %w", err)
	}
	return panes, nil
}

// cli runs `wezterm cli ARGS` against w's mux server.
func (x *WezTerm) cli(ctx context.Context, w Where, stdin io.Reader, args ...string) (string, error) {
	var env []string
	if s := weztermSocket(w.Server); s != "" {
		env = []string{"WEZTERM_UNIX_SOCKET=" + s}
	}
	return runProgram(ctx, env, stdin, x.program, append([]string{"cli"}, args...)...)
}

// weztermDefault names the mux server wezterm finds by itself.
const weztermDefault = "wezterm"

func weztermServer(socket string) string {
	if socket == "" {
		return weztermDefault
	}
	return socket
}

func weztermSocket(server string) string {
	if server == weztermDefault {
		return ""
	}
	return server
}
