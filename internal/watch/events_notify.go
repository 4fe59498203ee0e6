//go:build !(darwin || freebsd || openbsd || netbsd || dragonfly)

package watch

import (
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fileEvents: the system names the file that changed (inotify on Linux),
// unless Options.Events asks for the folder-level design.
const fileEvents = true

// newFolderSource is the folder-level design over inotify: each event
// names only its folder, gathered over latency as FSEvents does, so the
// logic of the Mac watcher runs, and is measured, here (docs/mac.md).
func newFolderSource(_ []string, latency time.Duration, log *slog.Logger) (folderSource, error) {
	fsw, err := fsnotify.NewBufferedWatcher(eventBuffer)
	if err != nil {
		return nil, err
	}
	s := &notifySource{fsw: fsw, c: newCoalescer(latency), done: make(chan struct{}), watched: map[string]bool{}}
	go s.run(log)
	return s, nil
}

// notifySource is a folderSource over inotify watches on single folders.
type notifySource struct {
	fsw  *fsnotify.Watcher
	c    *coalescer
	done chan struct{}

	mu      sync.Mutex
	watched map[string]bool // the folders added
}

func (s *notifySource) run(log *slog.Logger) {
	defer close(s.done)
	defer s.c.close()
	for {
		select {
		case ev, ok := <-s.fsw.Events:
			if !ok {
				return
			}
			if ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 && s.gone(ev.Name) {
				s.c.note(folderChange{Dir: ev.Name, Gone: true})
			}
			if ev.Op&^fsnotify.Chmod != 0 {
				s.c.note(folderChange{Dir: filepath.Dir(ev.Name)})
			}
		case err, ok := <-s.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.c.note(folderChange{All: true})
			} else {
				log.Warn("folder watch error", "err", err)
			}
		}
	}
}

func (s *notifySource) Add(dir string) error {
	if err := s.fsw.Add(dir); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watched[dir] = true
	return nil
}

func (s *notifySource) Remove(dir string) {
	s.mu.Lock()
	delete(s.watched, dir)
	s.mu.Unlock()
	_ = s.fsw.Remove(dir)
}

// gone reports whether p is a folder added, forgetting it: removed or
// moved, its watch is no more.
func (s *notifySource) gone(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.watched[p]
	delete(s.watched, p)
	return was
}

func (s *notifySource) Hot([]string)                   {}
func (s *notifySource) Complete() bool                 { return true }
func (s *notifySource) Changes() <-chan []folderChange { return s.c.out }

func (s *notifySource) Close() error {
	err := s.fsw.Close()
	<-s.done
	return err
}
