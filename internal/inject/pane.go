package inject

import (
	"errors"
	"fmt"

	"nudge/internal/proc"
)

// paneProcess walks up from the agent proc.Process to the process a terminal
// multiplexer started in its window or pane: the agent itself or the
// ancestor whose parent isServer says is the multiplexer's server. The
// multiplexers that name no process for a pane (screen, zellij) are checked
// against it.
func paneProcess(agent proc.Process, isServer func(ppid int) (bool, error)) (proc.Process, error) {
	p := agent
	for range maxAncestry {
		if p.PPID <= 1 {
			break
		}
		server, err := isServer(p.PPID)
		if err != nil {
			return proc.Process{}, err
		}
		if server {
			return p, nil
		}
		if p, err = readProcess(p.PPID); err != nil {
			return proc.Process{}, fmt.Errorf("walking up from pid %d: %w", agent.PID, err)
		}
	}
	return proc.Process{}, refuse(ErrNotInTerminal, "pid %d does not run under the multiplexer's server", agent.PID)
}

// reread reads again, at Send, the agent process and the process the
// multiplexer started in w's place: the agent must be the same run, the
// pane's process still there on a terminal, tty.
func reread(w Where, place string) (agent, pane proc.Process, tty string, err error) {
	if agent, err = sameRun(w, place); err != nil {
		return
	}
	pane, err = readProcess(w.PanePID)
	if errors.Is(err, ErrGone) {
		return agent, pane, "", refuse(ErrGone, "%s is gone (its process exited)", place)
	}
	if err != nil {
		return
	}
	if tty = proc.TTYPath(pane); tty == "" {
		return agent, pane, "", refuse(ErrGone, "%s is gone (its process has no terminal)", place)
	}
	return agent, pane, tty, nil
}

// underPane checks that agent runs under the pane's process, on its
// terminal tty.
func underPane(agent, pane proc.Process, tty, place string) error {
	if under, err := descendsFrom(agent.PID, pane.PID); err != nil || !under {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not under its process %d)", place, agent.PID, pane.PID)
	}
	return sameTerminal(agent, pane, tty, place)
}

// sameTerminal checks that agent and its pane's process share the
// terminal at tty: a process that left the pane's terminal is not in it.
func sameTerminal(agent, pane proc.Process, tty, place string) error {
	for _, p := range []proc.Process{agent, pane} {
		if same, err := proc.OnTTY(p, tty); err != nil || !same {
			return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not on %s)", place, p.PID, tty)
		}
	}
	return nil
}
