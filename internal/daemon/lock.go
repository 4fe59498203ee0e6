package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"nudge/internal/private"
)

// ErrAlreadyRunning means another daemon of this user holds the lock.
var ErrAlreadyRunning = errors.New("nudge is already running")

// instanceLock is the single-instance lock: an flock on a file in the data
// folder, released by the kernel when the process dies (kill -9 included).
type instanceLock struct{ f *os.File }

func lockInstance(dataDir string) (*instanceLock, error) {
	path := filepath.Join(dataDir, "nudge.lock")
	f, err := private.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil {
				return nil, fmt.Errorf("%w (pid %d)", ErrAlreadyRunning, pid)
			}
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &instanceLock{f: f}, nil
}

func (l *instanceLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// WaitStopped returns once no daemon holds dataDir's instance lock: a
// daemon releases it last, after its socket and database are closed. It
// waits on the lock itself (a blocking flock), not on a timer.
func WaitStopped(ctx context.Context, dataDir string) error {
	f, err := os.Open(filepath.Join(dataDir, "nudge.lock"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	free := make(chan error, 1)
	go func() {
		defer f.Close()
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		for errors.Is(err, syscall.EINTR) {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		}
		if err == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		}
		free <- err
	}()
	select {
	case err := <-free:
		if err != nil {
			return fmt.Errorf("wait for the daemon to stop: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the daemon has not stopped yet: %w", ctx.Err())
	}
}
