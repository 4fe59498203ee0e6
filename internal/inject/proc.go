package inject

import (
	"context"
	"fmt"
)

// process is what the OS tells about a running process.
type process struct {
	pid, ppid int
	// started identifies this run of pid: a reused pid has another value.
	started string
	// tty is the controlling terminal in the OS's own terms (Linux: the
	// tty_nr device number; elsewhere the ps tty name); "" when it has none.
	tty string
}

// maxAncestry bounds the walk from an agent process up to its pane's
// process; real shells nest a handful deep.
const maxAncestry = 64

// descendsFrom reports whether pid is ancestor or one of its descendants.
func descendsFrom(ctx context.Context, pid, ancestor int) (bool, error) {
	for range maxAncestry {
		if pid == ancestor {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		p, err := readProcess(ctx, pid)
		if err != nil {
			return false, fmt.Errorf("walking up from pid %d: %w", pid, err)
		}
		pid = p.ppid
	}
	return false, nil
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
