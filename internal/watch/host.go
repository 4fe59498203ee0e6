package watch

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"nudge/internal/watch/muse"
)

// A host tail (classify.HostQuery) follows a file only as a trigger: Muse's
// session.jsonl is not a format (docs/agents/muse.md §A1, §A6), so each change of
// it asks nudge's own `muse serve` about the session, named by the file's
// folder. Each answer (muse.Answer) is one record; the position kept in
// lines.pos and stored as Offset/End is the file's size when it was last
// asked about, so a restart asks again only about sessions that changed
// while nudge was away.

// addRoot prepares the host of r's agent, named by set; it starts only
// when a session changes.
func (h *hostSource) addRoot(r *root, set FileSet) {
	if h.askers == nil {
		h.askers = map[string]*asker{}
	}
	if h.askers[r.Agent] == nil {
		// Its working folder is the agent's home, never a project: a
		// process in a project folder may be taken for the person's
		// session when a continuation is typed.
		host := &muse.Host{Program: set.Host, Dir: r.Root, Log: h.w.log.With("host", set.Host+" serve")}
		h.askers[r.Agent] = &asker{host: host, name: set.Host + " serve", waiting: map[string]hostAsk{}, wake: make(chan struct{}, 1)}
	}
}

// close stops the hosts started.
func (h *hostSource) close() {
	for _, a := range h.askers {
		a.host.Close()
	}
}

// starts counts the hosts started so far.
func (h *hostSource) starts() int {
	n := 0
	for _, a := range h.askers {
		n += a.host.Starts()
	}
	return n
}

// stuck are the hosts that do not answer.
func (h *hostSource) stuck() []Stuck {
	var out []Stuck
	for _, a := range h.askers {
		if s, ok := a.stuckNow(); ok {
			out = append(out, s)
		}
	}
	return out
}

// hostSource follows files that only tell that their session changed
// (classify.HostQuery, Muse's session.jsonl): the session is asked of the
// agent's host, never read from the file.
type hostSource struct {
	w      *Watcher
	askers map[string]*asker // by agent; set up by New
}

func (*hostSource) stamp(p string, fi os.FileInfo) (int64, time.Time) { return fileStamp(p, fi) }
func (*hostSource) positioned() bool                                  { return true }
func (*hostSource) lasting() bool                                     { return true }

// read hands the question about t's session to its host's asker; fi
// describes the trigger file. A first run's existing sessions are history:
// their size is taken without asking.
func (h *hostSource) read(ctx context.Context, t *tail, fi os.FileInfo) {
	w := h.w
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
	a := h.askers[t.agent]
	if a == nil {
		return
	}
	if !a.started {
		a.started = true
		w.streams.Go(func() { a.run(ctx, h) })
	}
	a.put(hostAsk{t: t, session: filepath.Base(filepath.Dir(t.path)), size: size})
}

// takeHostReply emits a host's answer, on the watcher's loop; the answer
// of a file no longer followed is dropped.
func (h *hostSource) takeHostReply(ctx context.Context, r hostReply) {
	w := h.w
	t := r.ask.t
	if w.tails[t.path] != t {
		return
	}
	switch {
	case errors.Is(r.err, muse.ErrNoSession):
		w.log.Debug("the host does not know this session yet", "path", t.path, "err", r.err)
		return
	case r.err != nil:
		w.problem(t.path, "cannot ask the agent's host about a session", r.err)
		return
	}
	w.recovered(t.path)
	line, err := json.Marshal(r.answer)
	if err != nil {
		w.problem(t.path, "cannot encode the host's answer", err)
		return
	}
	from := t.lines.pos
	t.lines.reset(r.ask.size)
	w.emitFrom(ctx, t, Record{Agent: t.agent, Path: t.path, File: t.id(), Offset: from, End: r.ask.size, Line: line})
}

// Stuck is a source that cannot be read now.
type Stuck struct {
	Source string    // "muse serve", or a path
	Since  time.Time // since when
	Err    string    // what fails
}

// Host back-off: a host that does not answer is asked nothing for a while,
// doubling from hostBackoffMin to hostBackoffMax.
const (
	hostBackoffMin = 30 * time.Second
	hostBackoffMax = 10 * time.Minute
)

// hostAsk is one question for an agent's host: t's session, as of the
// trigger file's size then.
type hostAsk struct {
	t       *tail
	session string
	size    int64
}

// hostReply is a host's answer to an ask, for the watcher's loop.
type hostReply struct {
	ask    hostAsk
	answer muse.Answer
	err    error
}

// asker asks one agent's host, one question at a time, away from the
// watcher's loop: a host that takes its whole request time to fail holds
// up its own sessions only. Questions wait by session, the newest of each
// kept. A host that does not answer within its request time is asked
// nothing for a while (hostBackoffMin doubling to hostBackoffMax), its
// question kept, and is reported once until it answers again.
type asker struct {
	host    *muse.Host
	name    string
	started bool // owned by the watcher's loop

	mu      sync.Mutex
	waiting map[string]hostAsk // by session
	order   []string           // sessions in the order asked
	wake    chan struct{}
	stuck   Stuck // Since is zero while the host answers
}

// put queues ask, replacing an older one of the same session.
func (a *asker) put(ask hostAsk) {
	a.mu.Lock()
	if _, ok := a.waiting[ask.session]; !ok {
		a.order = append(a.order, ask.session)
	}
	a.waiting[ask.session] = ask
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest question.
func (a *asker) next() (hostAsk, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.order) == 0 {
		return hostAsk{}, false
	}
	session := a.order[0]
	a.order = a.order[1:]
	ask := a.waiting[session]
	delete(a.waiting, session)
	return ask, true
}

// again puts back a question the host did not answer, unless a newer one
// of its session waits.
func (a *asker) again(ask hostAsk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.waiting[ask.session]; !ok {
		a.order = append([]string{ask.session}, a.order...)
		a.waiting[ask.session] = ask
	}
}

func (a *asker) stuckNow() (Stuck, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stuck, !a.stuck.Since.IsZero()
}

// setStuck records whether the host answers; it reports a change.
func (a *asker) setStuck(err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	was := !a.stuck.Since.IsZero()
	switch {
	case err == nil:
		a.stuck = Stuck{}
	case !was:
		a.stuck = Stuck{Source: a.name, Since: time.Now(), Err: "does not answer: " + err.Error()}
	default:
		a.stuck.Err = "does not answer: " + err.Error()
	}
	return was != (err != nil)
}

// run asks the questions as they come until ctx ends.
func (a *asker) run(ctx context.Context, h *hostSource) {
	w := h.w
	var backoff time.Duration
	for {
		ask, ok := a.next()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-a.wake:
			}
			continue
		}
		answer, err := a.host.Read(ctx, ask.session)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, context.DeadlineExceeded) {
			a.again(ask)
			backoff = min(max(2*backoff, hostBackoffMin), hostBackoffMax)
			if a.setStuck(err) {
				w.log.Warn(a.name+" does not answer; Muse sessions are not read until it does", "asked_again_in", backoff, "err", err)
				w.statsChanged()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if a.setStuck(nil) {
			w.log.Info(a.name + " answers again")
			w.statsChanged()
		}
		reply := hostReply{ask: ask, answer: answer, err: err}
		w.post(ctx, func(ctx context.Context) { h.takeHostReply(ctx, reply) })
	}
}
