package inject

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// runProgram runs program with argv args (never a shell), env added to
// nudge's own, stdin from text when it is not nil, and returns its output.
func runProgram(ctx context.Context, env []string, stdin io.Reader, program string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		what := program
		if len(args) > 0 {
			what += " " + args[0]
		}
		return "", fmt.Errorf("%s: %w: %s", what, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// agentOnTerminal reads the agent process of t and its terminal's device
// path, refusing a target with no process or no terminal.
func agentOnTerminal(ctx context.Context, t Target) (process, string, error) {
	if t.PID <= 0 {
		return process{}, "", refuse(ErrNotInTerminal, "no agent process known")
	}
	agent, err := readProcess(ctx, t.PID)
	if err != nil {
		return process{}, "", err
	}
	tty := ttyPath(agent)
	if tty == "" {
		return process{}, "", refuse(ErrNotInTerminal, "pid %d has no terminal", t.PID)
	}
	return agent, tty, nil
}

// sameAgent re-reads the agent process w was located for: it must be the
// same run (start time) and still on the terminal at tty.
func sameAgent(ctx context.Context, w Where, tty string) error {
	agent, err := readProcess(ctx, w.PID)
	if err != nil {
		return err
	}
	if agent.started != w.Started {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d was restarted)", w, w.PID)
	}
	if same, err := onTTY(agent, tty); err != nil || !same {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not on %s)", w, w.PID, tty)
	}
	return nil
}
