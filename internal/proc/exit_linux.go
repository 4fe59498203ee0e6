//go:build linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WatchExit watches p, one of the person's processes, end: a pidfd, which
// becomes readable when the process exits, waited on by the runtime's
// poller (no thread, no timer). A pid that names another run of it by now
// counts as ended.
func WatchExit(p Process) (*Exit, error) {
	fd, err := unix.PidfdOpen(p.PID, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.ESRCH) {
		return ended(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("process %d: pidfd: %w", p.PID, err)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	// The pidfd names whatever runs as p.PID now: check it is p's run.
	if now, err := Get(p.PID); errors.Is(err, ErrGone) || err == nil && now.Started != p.Started {
		f.Close()
		return ended(), nil
	} else if err != nil {
		f.Close()
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("process %d: pidfd: %w", p.PID, err)
	}
	done := make(chan struct{})
	var once sync.Once
	stopped := make(chan struct{})
	go func() {
		err := waitReadable(rc)
		select {
		case <-stopped:
		default:
			if err == nil {
				close(done)
			}
		}
		f.Close()
	}()
	return &Exit{Done: done, stop: func() {
		once.Do(func() {
			close(stopped)
			f.SetReadDeadline(aLongTimeAgo) // wakes the poller's wait
		})
	}}, nil
}

// waitReadable waits until the pidfd behind rc is readable (its process
// ended) or its read deadline passes. Before each wait on the runtime's
// poller it asks the pidfd itself (poll(2) with a zero timeout: a look,
// not a wait). The poller is edge-triggered, so a pidfd is ready there
// once, and RawConn.Read drops a readiness the poller took before the
// wait began: without the look, a process that ended between the
// pidfd's registration (os.NewFile) and the wait would never be told.
func waitReadable(rc syscall.RawConn) error {
	var pollErr error
	err := rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if err != unix.EINTR {
				pollErr = err
				return err != nil || n > 0
			}
		}
	})
	if err == nil && pollErr != nil {
		err = fmt.Errorf("pidfd: poll: %w", pollErr)
	}
	return err
}

// aLongTimeAgo is a deadline that has passed: it ends a wait at once.
var aLongTimeAgo = time.Unix(1, 0)
