//go:build darwin && !cgo

package watch

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// fileEvents: macOS names folders; see events.go.
const fileEvents = false

// newFolderSource is the Mac build without cgo (no FSEvents): kqueue on
// each folder (an entry added, removed or renamed) and on the hot files
// (written, grown); the growth of other files is found by scans every
// Rescan (docs/mac.md).
func newFolderSource(_ []string, latency time.Duration, log *slog.Logger) (folderSource, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	wake := unix.Kevent_t{Ident: 0, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}
	if _, err := unix.Kevent(kq, []unix.Kevent_t{wake}, nil, nil); err != nil {
		unix.Close(kq)
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	s := &kqueueSource{kq: kq, c: newCoalescer(latency), fds: map[string]int{}, paths: map[int]string{}, hot: map[string]bool{}, done: make(chan struct{})}
	go s.run(log)
	return s, nil
}

type kqueueSource struct {
	kq    int
	c     *coalescer
	mu    sync.Mutex
	fds   map[string]int // watched folders and hot files
	paths map[int]string
	hot   map[string]bool // which of them are files
	done  chan struct{}
}

const kqueueNotes = unix.NOTE_WRITE | unix.NOTE_EXTEND | unix.NOTE_DELETE | unix.NOTE_RENAME

func (s *kqueueSource) run(log *slog.Logger) {
	defer close(s.done)
	defer s.c.close()
	events := make([]unix.Kevent_t, 64)
	for {
		n, err := unix.Kevent(s.kq, nil, events, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			log.Warn("kqueue", "err", err)
			return
		}
		s.mu.Lock()
		for _, ev := range events[:n] {
			if ev.Filter == unix.EVFILT_USER {
				s.mu.Unlock()
				return
			}
			p, ok := s.paths[int(ev.Ident)]
			switch {
			case !ok:
			case s.hot[p]:
				s.c.note(folderChange{Dir: filepath.Dir(p)})
			case ev.Fflags&(unix.NOTE_DELETE|unix.NOTE_RENAME) != 0:
				s.c.note(folderChange{Dir: p, Gone: true}) // its descriptor stays with what was moved or removed
				s.c.note(folderChange{Dir: filepath.Dir(p)})
			default:
				s.c.note(folderChange{Dir: p})
			}
		}
		s.mu.Unlock()
	}
}

// watch opens p for events only and registers it.
func (s *kqueueSource) watch(p string, file bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.fds[p]; ok {
		return nil
	}
	fd, err := unix.Open(p, unix.O_EVTONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	ev := unix.Kevent_t{Ident: uint64(fd), Filter: unix.EVFILT_VNODE, Flags: unix.EV_ADD | unix.EV_CLEAR, Fflags: kqueueNotes}
	if _, err := unix.Kevent(s.kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(fd)
		return fmt.Errorf("kqueue %s: %w", p, err)
	}
	s.fds[p], s.paths[fd] = fd, p
	if file {
		s.hot[p] = true
	}
	return nil
}

func (s *kqueueSource) unwatch(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fd, ok := s.fds[p]; ok {
		unix.Close(fd) // closing drops its kevent
		delete(s.fds, p)
		delete(s.paths, fd)
		delete(s.hot, p)
	}
}

func (s *kqueueSource) Add(dir string) error { return s.watch(dir, false) }
func (s *kqueueSource) Remove(dir string)    { s.unwatch(dir) }

func (s *kqueueSource) Hot(files []string) {
	now := map[string]bool{}
	for _, f := range files {
		now[f] = true
		_ = s.watch(f, true) // a file gone meanwhile: its folder says so
	}
	s.mu.Lock()
	var cold []string
	for p := range s.hot {
		if !now[p] {
			cold = append(cold, p)
		}
	}
	s.mu.Unlock()
	for _, p := range cold {
		s.unwatch(p)
	}
}

func (s *kqueueSource) Complete() bool                 { return false }
func (s *kqueueSource) Changes() <-chan []folderChange { return s.c.out }

func (s *kqueueSource) Close() error {
	trigger := unix.Kevent_t{Ident: 0, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}
	_, err := unix.Kevent(s.kq, []unix.Kevent_t{trigger}, nil, nil)
	<-s.done
	s.mu.Lock()
	for _, fd := range s.fds {
		unix.Close(fd)
	}
	s.mu.Unlock()
	unix.Close(s.kq)
	return err
}
