package watch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"nudge/internal/watch/muse"
)

// A host tail (FileSet.Host) follows a file only as a trigger: Muse's
// session.jsonl is not a format (docs/agents/muse.md §A1, §A6), so each change of
// it asks nudge's own `muse serve` about the session, named by the file's
// folder. Each answer (muse.Answer) is one record; the position kept in
// lines.pos and stored as Offset/End is the file's size when it was last
// asked about, so a restart asks again only about sessions that changed
// while nudge was away.

// addHosts prepares one host per agent whose files name one; it starts
// only when a session changes.
func (w *Watcher) addHosts(r *root) {
	for _, set := range r.Files {
		if set.Host == "" {
			continue
		}
		if w.hosts == nil {
			w.hosts = map[string]*muse.Host{}
		}
		if w.hosts[r.Agent] == nil {
			// Its working folder is the agent's home, never a project:
			// a process in a project folder may be taken for the
			// person's session when a continuation is typed.
			w.hosts[r.Agent] = &muse.Host{Program: set.Host, Dir: r.Root, Log: w.log.With("host", set.Host+" serve")}
		}
	}
}

func (w *Watcher) closeHosts() {
	for _, h := range w.hosts {
		h.Close()
	}
}

// HostStarts counts the hosts started so far, for tests and views.
func (w *Watcher) HostStarts() int {
	n := 0
	for _, h := range w.hosts {
		n += h.Starts()
	}
	return n
}

// askHost asks the host about t's session and emits the answer; fi
// describes the trigger file. A first run's existing sessions are history:
// their size is taken without asking.
func (w *Watcher) askHost(ctx context.Context, t *tail, fi os.FileInfo) {
	dev, ino := fileKey(fi)
	size := fi.Size()
	t.size, t.mtime, t.used = size, fi.ModTime().UnixNano(), time.Now()
	switch {
	case t.atEnd:
		t.atEnd, t.known, t.dev, t.ino = false, true, dev, ino
		t.lines.reset(size)
		t.committed = t.point()
		w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: t.id(), Offset: size, End: size, Checkpoint: true})
		return
	case t.known && dev == t.dev && ino == t.ino && size == t.lines.pos && w.initial:
		return // unchanged while nudge was away
	}
	t.known, t.dev, t.ino = true, dev, ino
	h := w.hosts[t.agent]
	if h == nil {
		return
	}
	session := filepath.Base(filepath.Dir(t.path))
	a, err := h.Read(ctx, session)
	switch {
	case errors.Is(err, muse.ErrNoSession):
		w.log.Debug("the host does not know this session yet", "path", t.path, "err", err)
		return
	case err != nil:
		w.problem(t.path, "cannot ask the agent's host about a session", err)
		return
	}
	delete(w.problems, t.path)
	line, err := json.Marshal(a)
	if err != nil {
		w.problem(t.path, "cannot encode the host's answer", err)
		return
	}
	from := t.lines.pos
	t.lines.reset(size)
	w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: t.id(), Offset: from, End: size, Line: line})
}
