package inject

import (
	"errors"
	"fmt"

	"nudge/internal/proc"
)

// readProcess reads the person's process pid; one that is gone, or runs as
// another user, is refused.
func readProcess(pid int) (proc.Process, error) {
	p, err := proc.Get(pid)
	if err != nil {
		return proc.Process{}, processError(pid, err)
	}
	return p, nil
}

// processEnv returns the value of key in the environment the person's
// process pid was started with; ok is false when it is not set.
func processEnv(pid int, key string) (value string, ok bool, err error) {
	env, err := proc.Env(pid)
	if err != nil {
		return "", false, processError(pid, err)
	}
	value, ok = proc.Lookup(env, key)
	return value, ok, nil
}

// processArgs returns the command line of the person's process pid.
func processArgs(pid int) ([]string, error) {
	args, err := proc.Args(pid)
	if err != nil {
		return nil, processError(pid, err)
	}
	return args, nil
}

// processError turns an error of package proc into a refusal.
func processError(pid int, err error) error {
	switch {
	case errors.Is(err, proc.ErrGone):
		return refuse(ErrGone, "agent process %d is gone", pid)
	case errors.Is(err, proc.ErrNotMine):
		return refuse(ErrOtherProcess, "pid %d is another user's process; nudge never types for it", pid)
	}
	return fmt.Errorf("reading process %d: %w", pid, err)
}

// maxAncestry bounds the walk from an agent process up to its pane's
// process; real shells nest a handful deep.
const maxAncestry = 64

// descendsFrom reports whether pid is ancestor or one of its descendants.
// The walk stops at a parent of another user: the person's pane process
// is never above one.
func descendsFrom(pid, ancestor int) (bool, error) {
	for range maxAncestry {
		if pid == ancestor {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		p, err := proc.Get(pid)
		if errors.Is(err, proc.ErrNotMine) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("walking up from pid %d: %w", pid, processError(pid, err))
		}
		pid = p.PPID
	}
	return false, nil
}

// tmuxServer returns the socket of the tmux server pid runs under, from the
// TMUX=<socket>,<server pid>,<session> variable tmux puts in a pane's
// environment (as the process was started).
func tmuxServer(pid int) (string, error) {
	v, ok, err := processEnv(pid, "TMUX")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", refuse(ErrNotInTerminal, "pid %d is not in tmux (no TMUX in its environment)", pid)
	}
	return tmuxSocket(pid, v)
}

// refusal is an error whose text is written for the person and which wraps
// one of the package's Err values.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

// refuse returns a refusal of kind with the formatted message.
func refuse(kind error, format string, args ...any) error {
	return &refusal{kind: kind, msg: fmt.Sprintf(format, args...)}
}
