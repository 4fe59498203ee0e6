package inject

import (
	"context"
	"fmt"
)

// paneProcess walks up from the agent process to the process a terminal
// multiplexer started in its window or pane: the agent itself or the
// ancestor whose parent isServer says is the multiplexer's server. The
// multiplexers that name no process for a pane (screen, zellij) are checked
// against it.
func paneProcess(ctx context.Context, agent process, isServer func(ppid int) (bool, error)) (process, error) {
	p := agent
	for range maxAncestry {
		if p.ppid <= 1 {
			break
		}
		server, err := isServer(p.ppid)
		if err != nil {
			return process{}, err
		}
		if server {
			return p, nil
		}
		if p, err = readProcess(ctx, p.ppid); err != nil {
			return process{}, fmt.Errorf("walking up from pid %d: %w", agent.pid, err)
		}
	}
	return process{}, refuse(ErrNotInTerminal, "pid %d does not run under the multiplexer's server", agent.pid)
}

// sameTerminal checks that agent and its pane's process share the
// terminal at tty: a process that left the pane's terminal is not in it.
func sameTerminal(agent, pane process, tty, place string) error {
	for _, p := range []process{agent, pane} {
		if same, err := onTTY(p, tty); err != nil || !same {
			return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not on %s)", place, p.pid, tty)
		}
	}
	return nil
}
