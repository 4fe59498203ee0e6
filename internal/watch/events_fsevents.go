//go:build darwin && cgo

package watch

import (
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsevents"
)

// fileEvents: macOS names folders (FSEvents); see events.go.
const fileEvents = false

// newFolderSource watches the roots' trees with one FSEvents stream: no
// descriptor per folder or file, changes named by folder, at once after a
// quiet latency and at most once per latency otherwise (NoDefer;
// docs/mac.md). This file is the only one that needs macOS to build.
func newFolderSource(roots []string, latency time.Duration, log *slog.Logger) (folderSource, error) {
	s := &fseventsSource{c: newCoalescer(10 * time.Millisecond), canon: map[string]string{}, done: make(chan struct{})}
	for _, r := range roots {
		if c, err := filepath.EvalSymlinks(r); err == nil && c != r {
			s.canon[c] = r // FSEvents names real paths
		}
	}
	s.es = &fsevents.EventStream{Paths: roots, Latency: latency, Flags: fsevents.WatchRoot | fsevents.NoDefer, Events: make(chan []fsevents.Event)}
	if err := s.es.Start(); err != nil {
		return nil, err
	}
	go s.run()
	return s, nil
}

type fseventsSource struct {
	es    *fsevents.EventStream
	c     *coalescer
	canon map[string]string // a root's real path → the root
	done  chan struct{}
}

func (s *fseventsSource) run() {
	defer close(s.done)
	for evs := range s.es.Events {
		for _, ev := range evs {
			if ev.Flags&(fsevents.MustScanSubDirs|fsevents.UserDropped|fsevents.KernelDropped) != 0 {
				s.c.note(folderChange{All: true})
				continue
			}
			s.c.note(folderChange{Dir: s.path(ev.Path)})
		}
	}
}

// path is the folder an event names, spelled as the roots are.
func (s *fseventsSource) path(p string) string {
	p = filepath.Clean("/" + strings.TrimPrefix(p, "/"))
	for c, r := range s.canon {
		if rest, ok := strings.CutPrefix(p, c); ok && (rest == "" || rest[0] == '/') {
			return r + rest
		}
	}
	return p
}

func (s *fseventsSource) Add(string) error               { return nil }
func (s *fseventsSource) Remove(string)                  {}
func (s *fseventsSource) Hot([]string)                   {}
func (s *fseventsSource) Complete() bool                 { return true }
func (s *fseventsSource) Changes() <-chan []folderChange { return s.c.out }

func (s *fseventsSource) Close() error {
	s.es.Stop()
	close(s.es.Events)
	<-s.done
	s.c.close()
	return nil
}
