package inject

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// listProcesses reads every live process of this user from /proc (proc(5)):
// cmdline holds argv NUL-separated, comm the command name. Processes that vanish or cannot be read are skipped.
func listProcesses(ctx context.Context) ([]candidate, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading /proc: %w", err)
	}
	uid := uint32(os.Getuid())
	var out []candidate
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dir := filepath.Join("/proc", e.Name())
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || st.Uid != uid {
			continue
		}
		p, err := readProcess(ctx, pid)
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // kernel threads have no command line
		}
		args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		out = append(out, candidate{
			pid: pid, ppid: p.ppid, args: args,
			names: baseNames(strings.TrimSpace(string(comm)), args),
		})
	}
	return out, nil
}

// holdsOpen reports whether pid has file open (a link in /proc/<pid>/fd).
func holdsOpen(_ context.Context, pid int, file string) bool {
	want, err := os.Stat(file)
	if err != nil {
		return false
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if got, err := os.Stat(filepath.Join(dir, fd.Name())); err == nil && os.SameFile(got, want) {
			return true
		}
	}
	return false
}

// processCwd is pid's working folder (/proc/<pid>/cwd), or "" when unknown.
func processCwd(_ context.Context, pid int) string {
	cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	return cwd
}
