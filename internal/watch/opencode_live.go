package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"nudge/internal/classify"
	"nudge/internal/proc"
	"nudge/internal/watch/agentdb"
	"nudge/internal/watch/opencode"
)

// The live event streams of running OpenCode processes. Retrying, quota
// sleeps and open boxes exist only in the owning process and its HTTP event
// stream, never in the database (docs/agents/opencode.md §2.4, §3).
//
// The process table is read only when something says a server may have
// started: the database, its -wal file or OpenCode's log changed (wake),
// once those changes have settled and never more often than liveGap. Only
// the person's own processes are considered (package proc), and a server is
// followed only when its environment could be read and names a database
// nudge watches. A followed stream ends with its process.
//
// A stream's events become records of that database, with the path
//
//	opencode-sse://<pid>@<host>:<port>/<session>
//
// (classify.OpenCodeLivePath) one per process and session, and no position. Nothing a stream says is
// taken before the database confirms it: a session's events pass only once
// the database holds that session, in the folder the stream names. While a
// stream reports a session, that session's database rows are skipped
// (opencode_db.go).

const (
	// liveSettle is how long the changes that woke the search may go on
	// before the process table is read.
	liveSettle = 500 * time.Millisecond
	// liveGap is the least time between two reads of the process table.
	liveGap = 3 * time.Second
	// liveReconnect is the first pause before a dropped stream of a still
	// running server is opened again; it doubles up to liveReconnectMax.
	liveReconnect    = time.Second
	liveReconnectMax = time.Minute
	// liveSilence cuts a stream that sent nothing for this long (OpenCode
	// sends a heartbeat every 10 s): a hung connection is opened again.
	liveSilence = 30 * time.Second
	// liveRecheck is how often a session the database does not hold yet
	// is looked for again, while its stream speaks of it.
	liveRecheck = time.Second
)

// liveState is the watcher's side of the live streams.
type liveState struct {
	// wake says a server may have started (databaseSource.wake).
	wake chan struct{}
	// covered counts, per session, the live streams that report it; owned
	// by the Run goroutine.
	covered map[string]int
}

func newLiveState() liveState {
	return liveState{wake: make(chan struct{}, 1), covered: map[string]int{}}
}

// wakeSource is the files whose change only says that an OpenCode process
// may have started (classify.Wake, OpenCode's log): they are never read.
type wakeSource struct{ db *databaseSource }

func (wakeSource) stamp(p string, fi os.FileInfo) (int64, time.Time) { return fileStamp(p, fi) }
func (wakeSource) positioned() bool                                  { return false }
func (wakeSource) lasting() bool                                     { return false }
func (wakeSource) read(context.Context, *tail, os.FileInfo)          {}

// fire wakes the search for OpenCode servers.
func (s wakeSource) fire() { s.db.wake() }

// wake asks for the process table to be searched for OpenCode servers:
// a database or OpenCode's log changed. It never blocks.
func (d *databaseSource) wake() {
	select {
	case d.live.wake <- struct{}{}:
	default:
	}
}

// liveMsg is one event from a stream, or (ended set) the sessions a stream
// no longer reports.
type liveMsg struct {
	agent, path, session string
	line                 []byte
	first                bool     // the stream's first event of this session
	ended                []string // the sessions the stream stops reporting
}

// liveProc is a followed OpenCode server and the database source it writes.
type liveProc struct {
	opencode.Server
	agent, db string
}

// takeLive handles a message of a stream on the Run goroutine.
func (d *databaseSource) takeLive(ctx context.Context, m liveMsg) {
	w := d.w
	if m.ended != nil {
		for _, s := range m.ended {
			if d.live.covered[s]--; d.live.covered[s] <= 0 {
				delete(d.live.covered, s)
			}
		}
		return
	}
	if m.first {
		d.live.covered[m.session]++
	}
	w.emit(ctx, Record{Agent: m.agent, Path: m.path, Line: m.line})
}

// databases lists the database files the sources name, by agent.
func (d *databaseSource) databases() []liveProc {
	w := d.w
	var out []liveProc
	for _, r := range w.roots {
		for _, set := range r.Files {
			if set.Kind == classify.Database {
				out = append(out, liveProc{agent: r.Agent, db: filepath.Join(r.Root, filepath.FromSlash(set.Pattern))})
			}
		}
	}
	return out
}

// run searches the process table for OpenCode servers each time wake
// asks, and follows their streams, until ctx ends. It does nothing when no
// root has a database.
func (d *databaseSource) run(ctx context.Context) {
	dbs := d.databases()
	if len(dbs) == 0 {
		return
	}
	followed := map[string]string{} // "pid@start" → address, while its stream runs
	told := map[string]bool{}       // processes whose refusal was logged
	ended := make(chan string)
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case k := <-ended:
			delete(followed, k)
			continue
		case <-d.live.wake:
		}
		settle := time.NewTimer(max(liveSettle, liveGap-time.Since(last)))
	settling:
		for {
			select {
			case <-ctx.Done():
				settle.Stop()
				return
			case k := <-ended:
				delete(followed, k)
			case <-d.live.wake:
			case <-settle.C:
				break settling
			}
		}
		last = time.Now()
		d.searchLive(ctx, dbs, followed, told, ended)
	}
}

// searchLive follows every OpenCode server of the person's that is not
// followed yet and writes a watched database.
func (d *databaseSource) searchLive(ctx context.Context, dbs []liveProc, followed map[string]string, told map[string]bool, ended chan<- string) {
	w := d.w
	w.log.Debug("looking for OpenCode servers among the person's processes")
	start := time.Now()
	procs, err := proc.List(ctx)
	if err != nil {
		w.log.Debug("cannot list processes for OpenCode servers", "err", err)
		return
	}
	addrs := map[string]bool{}
	for _, a := range followed {
		addrs[a] = true
	}
	seen := map[string]bool{}
	for _, p := range procs {
		key := strconv.Itoa(p.PID) + "@" + p.Started
		if p.PID == os.Getpid() || !opencode.IsOpenCode(p) || followed[key] != "" {
			continue
		}
		seen[key] = true
		s, err := opencode.FindServer(p)
		if errors.Is(err, opencode.ErrNoServer) || errors.Is(err, proc.ErrGone) {
			continue
		}
		var lp liveProc
		if err == nil {
			agent, db, ok := attach(s.DB, dbs)
			if ok {
				lp = liveProc{Server: s, agent: agent, db: db}
			} else {
				err = fmt.Errorf("it writes %s, a database nudge does not watch", s.DB)
			}
		}
		if err != nil {
			if !told[key] {
				told[key] = true
				w.log.Info("OpenCode process not followed", "pid", p.PID, "err", err)
			}
			continue
		}
		// The npm launcher and the native process it starts share one
		// server: follow it once.
		if addrs[s.Addr] {
			continue
		}
		followed[key], addrs[s.Addr] = s.Addr, true
		w.log.Info("following OpenCode event stream", "pid", s.PID, "addr", s.Addr, "db", lp.db)
		w.streams.Go(func() {
			d.followStream(ctx, lp)
			select {
			case ended <- key:
			case <-ctx.Done():
			}
		})
	}
	for k := range told {
		if !seen[k] {
			delete(told, k)
		}
	}
	w.log.Debug("looked for OpenCode servers", "processes", len(procs), "following", len(followed), "took", time.Since(start))
}

// attach picks the watched database a process writes, by its path.
func attach(db string, dbs []liveProc) (agent, path string, ok bool) {
	for _, d := range dbs {
		if sameFile(db, d.db) {
			return d.agent, d.db, true
		}
	}
	return "", "", false
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// liveSession is what a stream knows of one session it spoke of.
type liveSession struct {
	folder    string    // the session's folder in the database, once confirmed
	confirmed bool      // the database holds the session
	checked   time.Time // the last look in the database
	covered   bool      // its events were passed on: Run counts this stream
	refused   bool      // the stream named another folder: not used for it
}

// followStream reads p's stream, opening it again while the process runs
// and serves where it did, and finally tells Run which sessions it no
// longer reports.
func (d *databaseSource) followStream(ctx context.Context, p liveProc) {
	w := d.w
	sessions := map[string]*liveSession{}
	defer func() {
		var ended []string
		for id, s := range sessions {
			if s.covered {
				ended = append(ended, id)
			}
		}
		d.sendLive(ctx, liveMsg{ended: ended})
	}()
	pause := liveReconnect
	for ctx.Err() == nil {
		got, err := d.readStream(ctx, p, sessions)
		if errors.Is(err, opencode.ErrUnauthorized) {
			w.log.Warn("cannot follow OpenCode event stream; the database is still read", "pid", p.PID, "addr", p.Addr, "err", err)
			return
		}
		if ctx.Err() != nil {
			return
		}
		// The stream ended: a server whose process went, or that no
		// longer listens there, is done.
		now, err2 := proc.Get(p.PID)
		if err2 != nil || now.Started != p.Started {
			break
		}
		s, err2 := opencode.FindServer(now)
		if err2 != nil || s.Addr != p.Addr {
			break
		}
		p.Server = s
		if got {
			pause = liveReconnect
		}
		w.log.Debug("OpenCode event stream dropped; opening it again", "pid", p.PID, "addr", p.Addr, "in", pause, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, liveReconnectMax)
	}
	w.log.Info("OpenCode process gone; its stream ends", "pid", p.PID, "addr", p.Addr)
}

// liveFrame is the part of a /global/event frame the stream looks at:
// {"directory","project","payload":{"type","properties":{"sessionID"}}}.
type liveFrame struct {
	Directory string          `json:"directory"`
	Payload   json.RawMessage `json:"payload"`
}

type livePayload struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
	} `json:"properties"`
}

// readStream follows GET /global/event, which carries every instance
// (project folder) of the process, and hands each session event to Run as
// /event sends it. Durable duplicates (`sync`) and events of no session
// (heartbeats, plugins) are dropped. got tells whether any frame came.
func (d *databaseSource) readStream(ctx context.Context, p liveProc, sessions map[string]*liveSession) (got bool, err error) {
	w := d.w
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	silence := time.AfterFunc(liveSilence, cancel)
	defer silence.Stop()
	body, err := p.Stream(ctx)
	if err != nil {
		return false, err
	}
	defer body.Close()
	br := bufio.NewReaderSize(body, readBuffer)
	var data, line []byte
	over := false // the frame passed the line cap: it is dropped
	for {
		chunk, err := br.ReadSlice('\n')
		silence.Reset(liveSilence)
		if !over {
			line = append(line, chunk...)
			over = len(data)+len(line) > w.opts.LineCap
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return got, errors.New("event stream ended")
			}
			return got, fmt.Errorf("event stream: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch v, isData := bytes.CutPrefix(line, []byte("data:")); {
		case len(line) == 0 && !over:
			if len(data) > 0 {
				got = true
				d.liveEvent(ctx, p, data, sessions)
			}
			data = data[:0]
		case len(line) == 0:
			data, over = data[:0], false
		case isData && !over:
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
		line = line[:0]
	}
}

// liveEvent passes one frame's payload to Run, once the database confirms
// its session and folder.
func (d *databaseSource) liveEvent(ctx context.Context, p liveProc, frame []byte, sessions map[string]*liveSession) {
	w := d.w
	var f liveFrame
	if json.Unmarshal(frame, &f) != nil {
		return
	}
	payload := frame
	if len(f.Payload) > 0 {
		payload = f.Payload
	}
	var ev livePayload
	if json.Unmarshal(payload, &ev) != nil || ev.Type == "sync" || ev.Properties.SessionID == "" {
		return
	}
	id := ev.Properties.SessionID
	s := sessions[id]
	if s == nil {
		s = &liveSession{}
		sessions[id] = s
	}
	if !d.confirm(ctx, p, id, s) {
		return
	}
	if f.Directory != "" && filepath.Clean(f.Directory) != filepath.Clean(s.folder) {
		w.log.Warn("OpenCode event stream names another folder than the database for a session; the stream is not used for it",
			"pid", p.PID, "session", id, "stream", f.Directory, "database", s.folder)
		s.refused = true
		if s.covered {
			s.covered = false
			d.sendLive(ctx, liveMsg{ended: []string{id}})
		}
		return
	}
	m := liveMsg{agent: p.agent, path: classify.OpenCodeLivePath(p.PID, p.Addr, id), session: id, line: bytes.Clone(payload)}
	if !s.covered {
		s.covered, m.first = true, true
	}
	d.sendLive(ctx, m)
}

// confirm tells whether the stream's events of session id may pass: the
// database the process writes holds the session (looked up at most every
// liveRecheck while it does not).
func (d *databaseSource) confirm(ctx context.Context, p liveProc, id string, s *liveSession) bool {
	w := d.w
	if s.refused {
		return false
	}
	if s.confirmed {
		return true
	}
	if time.Since(s.checked) < liveRecheck {
		return false
	}
	s.checked = time.Now()
	folder, err := sessionFolder(ctx, p.db, id)
	if err != nil {
		w.log.Debug("OpenCode stream event of a session the database does not confirm; dropped", "pid", p.PID, "session", id, "err", err)
		return false
	}
	s.folder, s.confirmed = folder, true
	return true
}

// sessionFolder reads a session's folder from the database at path, in
// one short read.
func sessionFolder(ctx context.Context, path, id string) (string, error) {
	if wal, err := opencode.InWAL(path); err != nil {
		return "", err
	} else if !wal {
		return "", fmt.Errorf("database %s is not in WAL mode yet", path)
	}
	db, err := opencode.Open(new(agentdb.WAL), path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	return opencode.SessionFolder(ctx, db.DB, id)
}

// sendLive hands m to the Watcher's loop.
func (d *databaseSource) sendLive(ctx context.Context, m liveMsg) {
	d.w.post(ctx, func(ctx context.Context) { d.takeLive(ctx, m) })
}
