package inject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"nudge/internal/proc"
)

// Zellij types into the zellij pane that holds the agent proc.Process, named by
// the ZELLIJ_SESSION_NAME and ZELLIJ_PANE_ID that zellij puts in the
// environment of every pane's process, through `zellij action` with
// --pane-id (zellij 0.44 and later). Zellij names no process for a pane, so
// ownership is proven from the process table as for screen: the agent runs
// under the process the session's server (`zellij --server …/<session>`)
// started with that pane id, on the same terminal, and zellij lists the
// pane as a live terminal pane (pane ids are never reused within a session). The text goes
// in with write-chars, then Enter as the byte 13 with write.
type Zellij struct {
	program string
}

var _ Screener = (*Zellij)(nil)

// NewZellij returns the zellij backend, running the zellij found in PATH.
func NewZellij() *Zellij { return &Zellij{program: "zellij"} }

func init() {
	register(registration{
		name: "zellij", rank: rankZellij,
		available: func(Options) bool { return installed("zellij") },
		build:     func(Options) Backend { return NewZellij() },
	})
}

// Name is "zellij".
func (*Zellij) Name() string { return "zellij" }

// zellijPane is one entry of `zellij action list-panes --json`.
type zellijPane struct {
	ID       uint32 `json:"id"`
	IsPlugin bool   `json:"is_plugin"`
	Exited   bool   `json:"exited"`
	IsHeld   bool   `json:"is_held"`
}

// Locate finds the pane of the agent's zellij session that holds t.PID.
func (x *Zellij) Locate(ctx context.Context, t Target) (Where, error) {
	agent, tty, err := agentOnTerminal(t)
	if err != nil {
		return Where{}, err
	}
	session, ok, err := processEnv(t.PID, "ZELLIJ_SESSION_NAME")
	if err != nil {
		return Where{}, fmt.Errorf("zellij: %w", err)
	}
	if !ok || session == "" {
		return Where{}, refuse(ErrNotInTerminal, "pid %d is not in zellij (no ZELLIJ_SESSION_NAME in its environment)", t.PID)
	}
	id, _, _ := processEnv(t.PID, "ZELLIJ_PANE_ID")
	if _, err := strconv.ParseUint(id, 10, 32); err != nil {
		return Where{}, refuse(ErrNotInTerminal, "pid %d is in zellij session %s but names no pane (ZELLIJ_PANE_ID=%q)", t.PID, session, id)
	}
	pane, err := paneProcess(agent, func(ppid int) (bool, error) { return zellijServer(ppid, session), nil })
	if err != nil {
		return Where{}, refuse(ErrNotInTerminal, "pid %d does not run under the server of zellij session %s", t.PID, session)
	}
	w := Where{Server: session, Pane: "terminal_" + id, PID: agent.PID, Started: agent.Started, PanePID: pane.PID}
	if err := x.holds(ctx, w, agent, pane, tty); err != nil {
		return Where{}, err
	}
	return w, nil
}

// Send re-verifies the pane (listed and live, same pane proc.Process, same
// agent proc.Process on its terminal), then writes text and, once the pane
// shows it, presses Enter.
func (x *Zellij) Send(ctx context.Context, w Where, text string) error {
	if text == "" {
		return errors.New("empty continuation text")
	}
	if err := x.verify(ctx, w); err != nil {
		return err
	}
	return typeThenEnter(ctx, x, w, text, func() error {
		_, err := x.action(ctx, w, "write-chars", "--pane-id", w.Pane, "--", text)
		return err
	}, func() error {
		_, err := x.action(ctx, w, "write", "--pane-id", w.Pane, "13")
		return err
	})
}

// Screen returns the pane's visible text (`dump-screen` to standard output).
func (x *Zellij) Screen(ctx context.Context, w Where) (string, error) {
	return x.action(ctx, w, "dump-screen", "--pane-id", w.Pane)
}

// verify checks, at Send, that pane w still holds the process it was
// located for.
func (x *Zellij) verify(ctx context.Context, w Where) error {
	agent, pane, tty, err := reread(w, zellijPlace(w))
	if err != nil {
		return err
	}
	return x.holds(ctx, w, agent, pane, tty)
}

// zellijPlace names pane w in messages.
func zellijPlace(w Where) string { return "zellij pane " + w.Pane }

// holds checks that pane w is agent's: pane is the process zellij started
// in it (its environment names w's session and pane), agent runs under it
// on its terminal tty, and zellij lists the pane as a live terminal pane.
func (x *Zellij) holds(ctx context.Context, w Where, agent, pane proc.Process, tty string) error {
	place := zellijPlace(w)
	id := strings.TrimPrefix(w.Pane, "terminal_")
	paneID, _, _ := processEnv(pane.PID, "ZELLIJ_PANE_ID")
	session, _, _ := processEnv(pane.PID, "ZELLIJ_SESSION_NAME")
	if paneID != id || session != w.Server {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d was started in pane %q of session %q)", place, pane.PID, paneID, session)
	}
	if !zellijServer(pane.PPID, w.Server) {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d was not started by zellij)", place, pane.PID)
	}
	if err := underPane(agent, pane, tty, place); err != nil {
		return err
	}
	out, err := x.action(ctx, w, "list-panes", "--json")
	if err != nil {
		return fmt.Errorf("%s: %w", place, err)
	}
	panes, err := parseZellijPanes(out)
	if err != nil {
		return fmt.Errorf("zellij session %s: %w", w.Server, err)
	}
	for _, p := range panes {
		if p.IsPlugin || strconv.FormatUint(uint64(p.ID), 10) != id {
			continue
		}
		if p.Exited || p.IsHeld {
			return refuse(ErrGone, "%s is gone (its command exited)", place)
		}
		return nil
	}
	return refuse(ErrGone, "%s is gone from zellij session %s", place, w.Server)
}

// zellijServer reports whether pid is the server of zellij session: it runs
// as `zellij --server <socket folder>/<session>`.
func zellijServer(pid int, session string) bool {
	args, err := processArgs(pid)
	if err != nil {
		return false
	}
	for i := 1; i+1 < len(args); i++ {
		if args[i] == "--server" && filepath.Base(args[i+1]) == session {
			return true
		}
	}
	return false
}

// parseZellijPanes reads the output of `zellij action list-panes --json`.
func parseZellijPanes(out string) ([]zellijPane, error) {
	var panes []zellijPane
	if err := json.Unmarshal([]byte(out), &panes); err != nil {
		return nil, fmt.Errorf("zellij action list-panes --json: %w", err)
	}
	return panes, nil
}

// action runs `zellij --session SESSION action ARGS` (never a shell).
func (x *Zellij) action(ctx context.Context, w Where, args ...string) (string, error) {
	return runProgram(ctx, nil, nil, x.program, append([]string{"--session", w.Server, "action"}, args...)...)
}
