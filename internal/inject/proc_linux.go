package inject

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readProcess reads /proc/<pid>/stat (proc(5)): the fields after the
// parenthesised command name start at field 3, state.
func readProcess(_ context.Context, pid int) (process, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return process{}, refuse(ErrGone, "agent process %d is gone", pid)
	}
	if err != nil {
		return process{}, fmt.Errorf("reading process %d: %w", pid, err)
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return process{}, fmt.Errorf("reading process %d: malformed stat %q", pid, data)
	}
	f := strings.Fields(string(data[end+1:]))
	const (
		state     = 3 - 3
		ppid      = 4 - 3
		ttyNr     = 7 - 3
		startTime = 22 - 3
	)
	if len(f) <= startTime {
		return process{}, fmt.Errorf("reading process %d: short stat %q", pid, data)
	}
	if f[state] == "Z" || f[state] == "X" {
		return process{}, refuse(ErrGone, "agent process %d is gone", pid)
	}
	parent, err := strconv.Atoi(f[ppid])
	if err != nil {
		return process{}, fmt.Errorf("reading process %d: parent: %w", pid, err)
	}
	p := process{pid: pid, ppid: parent, started: f[startTime]}
	if f[ttyNr] != "0" {
		p.tty = f[ttyNr]
	}
	return p, nil
}

// tmuxServer returns the socket of the tmux server pid runs under, from the
// TMUX=<socket>,<server pid>,<session> variable tmux puts in a pane's
// environment (/proc/<pid>/environ, as the process was started).
func tmuxServer(ctx context.Context, pid int) (string, error) {
	v, ok, err := processEnv(ctx, pid, "TMUX")
	if err != nil {
		return "", err
	}
	if !ok {
		return "", refuse(ErrNotInTerminal, "pid %d is not in tmux (no TMUX in its environment)", pid)
	}
	return tmuxSocket(pid, v)
}

// onTTY reports whether p's controlling terminal is the device at path.
func onTTY(p process, path string) (bool, error) {
	if p.tty == "" {
		return false, nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false, fmt.Errorf("terminal %s: %w", path, err)
	}
	return strconv.FormatUint(uint64(st.Rdev), 10) == p.tty, nil
}

// processEnv returns the value of key in pid's environment as the process
// was started (/proc/<pid>/environ); ok is false when it is not set.
func processEnv(_ context.Context, pid int, key string) (string, bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", false, refuse(ErrGone, "agent process %d is gone", pid)
	}
	if err != nil {
		return "", false, fmt.Errorf("reading environment of pid %d: %w", pid, err)
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(key+"=")); ok {
			return string(v), true, nil
		}
	}
	return "", false, nil
}

// ttyPath is the device path of p's controlling terminal ("/dev/pts/4"):
// the one of its standard streams that is that terminal, else the pts
// device its number names (major 136-143, devices.txt); "" when it has none.
func ttyPath(p process) string {
	if p.tty == "" {
		return ""
	}
	for fd := range 3 {
		link := fmt.Sprintf("/proc/%d/fd/%d", p.pid, fd)
		if path, err := os.Readlink(link); err == nil && strings.HasPrefix(path, "/dev/") {
			if same, _ := onTTY(p, path); same {
				return path
			}
		}
	}
	dev, err := strconv.ParseUint(p.tty, 10, 64)
	if err != nil {
		return ""
	}
	major, minor := (dev>>8)&0xfff, (dev&0xff)|((dev>>12)&0xfff00)
	if major < 136 || major > 143 {
		return ""
	}
	return fmt.Sprintf("/dev/pts/%d", (major-136)*256+minor)
}
