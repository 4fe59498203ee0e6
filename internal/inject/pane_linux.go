package inject

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// processArgs returns pid's command line (/proc/<pid>/cmdline, argv
// NUL-separated).
func processArgs(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return nil, refuse(ErrGone, "process %d is gone", pid)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the command line of pid %d: %w", pid, err)
	}
	return strings.Split(string(bytes.TrimRight(data, "\x00")), "\x00"), nil
}
