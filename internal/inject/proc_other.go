//go:build !linux

package inject

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// readProcess asks ps for pid's parent, terminal and start time.
func readProcess(ctx context.Context, pid int) (process, error) {
	out, err := exec.CommandContext(ctx, "ps", "-o", "ppid=,tty=,lstart=", "-p", strconv.Itoa(pid)).Output()
	f := strings.Fields(string(out))
	if err != nil && len(f) == 0 {
		return process{}, refuse(ErrGone, "agent process %d is gone", pid)
	}
	if len(f) < 3 {
		return process{}, fmt.Errorf("reading process %d: unexpected ps output %q", pid, out)
	}
	parent, err := strconv.Atoi(f[0])
	if err != nil {
		return process{}, fmt.Errorf("reading process %d: parent: %w", pid, err)
	}
	p := process{pid: pid, ppid: parent, started: strings.Join(f[2:], " ")}
	if f[1] != "??" && f[1] != "-" {
		p.tty = f[1]
	}
	return p, nil
}

// tmuxServer returns the default tmux socket ($TMUX_TMPDIR or /tmp, then
// tmux-<uid>/default). Another process's environment cannot be read
// reliably here (ps -E shows it only for some processes), so an agent under
// a server started with -L or -S is not found; the pane match by terminal
// still proves the pane is the agent's.
func tmuxServer(_ context.Context, _ int) (string, error) {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), "default"), nil
}

// onTTY reports whether p's controlling terminal is the device at path.
func onTTY(p process, path string) (bool, error) {
	return p.tty != "" && "/dev/"+p.tty == path, nil
}

// processEnv cannot read another process's environment here (ps -E shows
// it only for some processes): ok is always false.
func processEnv(_ context.Context, pid int, key string) (string, bool, error) {
	return "", false, fmt.Errorf("the environment of pid %d (%s) cannot be read on this system", pid, key)
}

// ttyPath is the device path of p's controlling terminal ("/dev/ttys003"),
// "" when it has none.
func ttyPath(p process) string {
	if p.tty == "" {
		return ""
	}
	return "/dev/" + p.tty
}
