package inject

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"nudge/internal/proc"
)

// runProgram runs program with argv args (never a shell), env added to
// nudge's own, stdin from stdin when it is not nil, and returns its output.
// The text to type always goes on stdin, so an error may name every
// argument.
func runProgram(ctx context.Context, env []string, stdin io.Reader, program string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.WaitDelay = time.Second // a child left holding its output does not hold the caller
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		what := strings.Join(append([]string{program}, args...), " ")
		return "", fmt.Errorf("%s: %w: %s", what, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// agentProcess reads the agent process of t, refusing a target with none.
func agentProcess(t Target) (proc.Process, error) {
	if t.PID <= 0 {
		return proc.Process{}, refuse(ErrNotInTerminal, "no agent process known")
	}
	return readProcess(t.PID)
}

// agentOnTerminal reads the agent process of t and its terminal's device
// path, refusing a target with no process or no terminal.
func agentOnTerminal(t Target) (proc.Process, string, error) {
	agent, err := agentProcess(t)
	if err != nil {
		return proc.Process{}, "", err
	}
	tty := proc.TTYPath(agent)
	if tty == "" {
		return proc.Process{}, "", refuse(ErrNotInTerminal, "pid %d has no terminal", t.PID)
	}
	return agent, tty, nil
}

// sameRun re-reads the agent process w was located for, refusing it when
// the pid now names another run (another start time); place names w in
// the refusal.
func sameRun(w Where, place string) (proc.Process, error) {
	agent, err := readProcess(w.PID)
	if err != nil {
		return proc.Process{}, err
	}
	if agent.Started != w.Started {
		return proc.Process{}, refuse(ErrOtherProcess, "%s now belongs to another process (pid %d was restarted)", place, w.PID)
	}
	return agent, nil
}

// sameAgent re-reads the agent process w was located for: it must be the
// same run (start time) and still on the terminal at tty.
func sameAgent(w Where, tty string) error {
	agent, err := sameRun(w, w.String())
	if err != nil {
		return err
	}
	if same, err := proc.OnTTY(agent, tty); err != nil || !same {
		return refuse(ErrOtherProcess, "%s now belongs to another process (pid %d is not on %s)", w, w.PID, tty)
	}
	return nil
}
