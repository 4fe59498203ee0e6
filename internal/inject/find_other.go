//go:build !linux

package inject

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// listProcesses asks ps (`ps -x -o pid=,ppid=,uid=,args=`, no cgo) for
// every process of this user. ps joins argv with spaces, so an argument
// containing a space splits; only the first two serve as names.
func listProcesses(ctx context.Context) ([]candidate, error) {
	out, err := exec.CommandContext(ctx, "ps", "-x", "-o", "pid=,ppid=,uid=,args=").Output()
	if err != nil {
		return nil, fmt.Errorf("ps: %w", err)
	}
	uid := strconv.Itoa(os.Getuid())
	var cs []candidate
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 4 || f[2] != uid {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		args := f[3:]
		cs = append(cs, candidate{pid: pid, ppid: ppid, args: args, names: baseNames(args[0], args)})
	}
	return cs, nil
}

// processCwd is pid's working folder from lsof's field output ("n<path>")
// when lsof is installed, else "" (unknown: the project cannot narrow the
// search).
func processCwd(ctx context.Context, pid int) string {
	out, err := exec.CommandContext(ctx, "lsof", "-a", "-p", strconv.Itoa(pid), "-d", "cwd", "-Fn").Output()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "n"); ok {
			return p
		}
	}
	return ""
}

// holdsOpen reports whether lsof lists file among pid's open files; false
// without lsof.
func holdsOpen(ctx context.Context, pid int, file string) bool {
	out, err := exec.CommandContext(ctx, "lsof", "-p", strconv.Itoa(pid), "-Fn").Output()
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(out)) {
		if strings.TrimSpace(line) == "n"+file {
			return true
		}
	}
	return false
}
