//go:build darwin

package proc

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// WatchExit watches p, one of the person's processes, end: kqueue's
// EVFILT_PROC NOTE_EXIT, waited on by one goroutine until it fires or
// Stop (no timer). A pid that names another run of it by now counts as
// ended.
func WatchExit(p Process) (*Exit, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	changes := []unix.Kevent_t{
		{Ident: uint64(p.PID), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT},
		{Ident: 0, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR},
	}
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		unix.Close(kq)
		if errors.Is(err, unix.ESRCH) {
			return ended(), nil
		}
		return nil, fmt.Errorf("process %d: kqueue: %w", p.PID, err)
	}
	if now, err := Get(p.PID); errors.Is(err, ErrGone) || err == nil && now.Started != p.Started {
		unix.Close(kq)
		return ended(), nil
	} else if err != nil {
		unix.Close(kq)
		return nil, err
	}
	done := make(chan struct{})
	var (
		mu     sync.Mutex // kq stays open while Stop may trigger it
		closed bool
	)
	go func() {
		defer func() {
			mu.Lock()
			closed = true
			unix.Close(kq)
			mu.Unlock()
		}()
		events := make([]unix.Kevent_t, 2)
		for {
			n, err := unix.Kevent(kq, nil, events, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return
			}
			for _, ev := range events[:n] {
				if ev.Filter == unix.EVFILT_USER {
					return
				}
				if ev.Filter == unix.EVFILT_PROC {
					close(done)
					return
				}
			}
		}
	}()
	return &Exit{Done: done, stop: func() {
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			trigger := unix.Kevent_t{Ident: 0, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}
			_, _ = unix.Kevent(kq, []unix.Kevent_t{trigger}, nil, nil)
		}
	}}, nil
}
