// Package proc reads the process table, and only the person's own part of
// it: every process it lists or reads runs with nudge's user id as both its
// real and its effective user id. Another user's process is never listed,
// and asking about one is ErrNotMine (docs/security.md, "Other users'
// processes"). Linux reads /proc; macOS asks sysctl. No lookup spawns a
// program, except the working folder and open files on macOS (docs/mac.md).
package proc

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrGone: no such process (any more), or it is a zombie.
	ErrGone = errors.New("process is gone")
	// ErrNotMine: the process runs as another user (or as nudge's user
	// only in part: its real and effective ids differ).
	ErrNotMine = errors.New("process belongs to another user")
)

// Process is one of the person's running processes.
type Process struct {
	PID, PPID int
	// Started identifies this run of PID: a reused pid has another value
	// (Linux: start time in clock ticks since boot; macOS: seconds.micros).
	Started string
	// TTY is the controlling terminal's device number in decimal; "" when
	// the process has none.
	TTY string
	// Name is the kernel's command name (at most 15 or 16 bytes).
	Name string
	// Args is the command line; List fills it, Get leaves it nil.
	Args []string
}

// Lookup returns the value of key in env, a list of "KEY=value" strings.
func Lookup(env []string, key string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key); ok && strings.HasPrefix(v, "=") {
			return v[1:], true
		}
	}
	return "", false
}

func gone(pid int) error    { return fmt.Errorf("process %d: %w", pid, ErrGone) }
func notMine(pid int) error { return fmt.Errorf("process %d: %w", pid, ErrNotMine) }
