package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"nudge/internal/watch/opencode"
)

// The live event streams of running OpenCode processes. Retrying, quota
// sleeps and open boxes exist only in the owning process and its HTTP event
// stream, never in the database (formats/opencode.md §2.4, §3). Every few
// seconds the process table is searched for OpenCode processes that run a
// server; each one's stream is followed until the process goes. Its events
// become records of the database the process writes, with the path
//
//	opencode-sse://<pid>@<host>:<port>/<session>
//
// one per process and session, and no position. While a stream reports a
// session, that session's database rows are skipped (opencode_db.go).

const (
	// LivePrefix starts the path of a record from a live event stream.
	LivePrefix = "opencode-sse://"
	// liveScan is how often the process table is searched.
	liveScan = 2 * time.Second
	// liveReconnect is the pause before a dropped stream is opened again.
	liveReconnect = time.Second
)

// livePath is the record path of a session's events from one process.
func livePath(pid int, addr, session string) string {
	return LivePrefix + strconv.Itoa(pid) + "@" + addr + "/" + session
}

// liveState is the watcher's side of the live streams.
type liveState struct {
	msgs chan liveMsg
	// covered counts, per session, the live streams that report it; owned
	// by the Run goroutine.
	covered map[string]int
}

func newLiveState() liveState {
	return liveState{msgs: make(chan liveMsg, 256), covered: map[string]int{}}
}

// liveMsg is one event from a stream, or (ended set) the end of a stream.
type liveMsg struct {
	agent, path, session string
	line                 []byte
	first                bool     // the stream's first event of this session
	ended                []string // the sessions the stream reported
}

// liveProc is a running OpenCode process with a server.
type liveProc struct {
	pid   int
	addr  string // host:port
	argv  string // its command line, to tell the same process later
	agent string
	db    string // the database it writes
}

// takeLive handles a message of a stream on the Run goroutine.
func (w *Watcher) takeLive(ctx context.Context, m liveMsg) {
	if m.ended != nil {
		for _, s := range m.ended {
			if w.live.covered[s]--; w.live.covered[s] <= 0 {
				delete(w.live.covered, s)
			}
		}
		return
	}
	if m.first {
		w.live.covered[m.session]++
	}
	w.emit(ctx, Record{Agent: m.agent, Path: m.path, Line: m.line})
}

// databases lists the database files the sources name, by agent.
func (w *Watcher) databases() []liveProc {
	var out []liveProc
	for _, r := range w.roots {
		for _, set := range r.Files {
			if set.Database {
				out = append(out, liveProc{agent: r.Agent, db: filepath.Join(r.Root, filepath.FromSlash(set.Pattern))})
			}
		}
	}
	return out
}

// followLive finds OpenCode processes with a server and follows their
// streams, until ctx ends. It does nothing without a database source.
func (w *Watcher) followLive(ctx context.Context) {
	dbs := w.databases()
	if len(dbs) == 0 {
		return
	}
	followed := map[string]bool{} // pid@addr, until the process goes
	tick := time.NewTicker(liveScan)
	defer tick.Stop()
	for {
		procs, err := openCodeServers(ctx)
		if err != nil {
			w.log.Debug("cannot list processes for OpenCode servers", "err", err)
		}
		seen := map[string]bool{}
		addrs := map[string]bool{}
		for k := range followed {
			addrs[k[strings.IndexByte(k, '@')+1:]] = true
		}
		for _, p := range procs {
			key := strconv.Itoa(p.pid) + "@" + p.addr
			seen[key] = true
			// The npm launcher and the native process it starts share
			// one server: follow it once.
			if followed[key] || addrs[p.addr] {
				continue
			}
			if !attach(&p, dbs) {
				continue
			}
			followed[key], addrs[p.addr] = true, true
			w.log.Info("following OpenCode event stream", "pid", p.pid, "addr", p.addr, "db", p.db)
			w.streams.Go(func() { w.followStream(ctx, p) })
		}
		for k := range followed {
			if !seen[k] {
				delete(followed, k)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// attach picks the watched database p writes: the one its environment
// names, or the only one when its environment cannot be read.
func attach(p *liveProc, dbs []liveProc) bool {
	want, known := processDatabase(p.pid)
	for _, d := range dbs {
		if !known || sameFile(want, d.db) {
			p.agent, p.db = d.agent, d.db
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// processDatabase is the database an OpenCode process uses, from its
// environment: OPENCODE_DB (absolute, or relative to the data folder), else
// $XDG_DATA_HOME/opencode/opencode.db, else ~/.local/share/… (§2.1).
func processDatabase(pid int) (string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return "", false
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(raw, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	data := env["XDG_DATA_HOME"]
	if data == "" {
		if env["HOME"] == "" {
			return "", false
		}
		data = filepath.Join(env["HOME"], ".local", "share")
	}
	data = filepath.Join(data, "opencode")
	if db := env["OPENCODE_DB"]; db != "" {
		if filepath.IsAbs(db) {
			return db, true
		}
		return filepath.Join(data, db), true
	}
	return filepath.Join(data, "opencode.db"), true
}

// openCodeServers lists the OpenCode processes whose command line names a
// server (opencode.ServerAddr): from /proc where there is one, else ps.
func openCodeServers(ctx context.Context) ([]liveProc, error) {
	var out []liveProc
	add := func(pid int, argv []string) {
		if addr, ok := opencode.ServerAddr(argv); ok && pid != os.Getpid() {
			out = append(out, liveProc{pid: pid, addr: addr, argv: strings.Join(argv, "\x00")})
		}
	}
	entries, err := os.ReadDir("/proc")
	if err == nil {
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if argv, ok := procArgv(pid); ok {
				add(pid, argv)
			}
		}
		if len(entries) > 0 {
			if _, err := os.Stat("/proc/self/cmdline"); err == nil {
				return out, nil
			}
		}
	}
	// No /proc (macOS, BSDs): ps splits arguments at spaces, which is
	// enough to see "opencode", "serve" and "--port N".
	b, err := exec.CommandContext(ctx, "ps", "-axww", "-o", "pid=,args=").Output()
	if err != nil {
		return nil, fmt.Errorf("ps: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil {
			add(pid, f[1:])
		}
	}
	return out, nil
}

// procArgv reads a process's arguments from /proc.
func procArgv(pid int) ([]string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(raw) == 0 {
		return nil, false
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"), true
}

// stillRunning tells whether p's process is still there with the same
// command line.
func stillRunning(ctx context.Context, p liveProc) bool {
	if argv, ok := procArgv(p.pid); ok {
		return strings.Join(argv, "\x00") == p.argv
	}
	procs, err := openCodeServers(ctx)
	if err != nil {
		return true
	}
	for _, q := range procs {
		if q.pid == p.pid && q.addr == p.addr {
			return true
		}
	}
	return false
}

// errUnauthorized: the server wants a password nudge does not have (§2.4).
var errUnauthorized = errors.New("the server asks for a password (OPENCODE_SERVER_PASSWORD)")

// liveClient talks to loopback servers only: no proxy, no timeout on a stream.
var liveClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}

// followStream reads p's stream, reconnecting while the process runs, and
// finally tells Run which sessions it reported.
func (w *Watcher) followStream(ctx context.Context, p liveProc) {
	sessions := map[string]bool{}
	defer func() {
		ended := make([]string, 0, len(sessions))
		for s := range sessions {
			ended = append(ended, s)
		}
		select {
		case w.live.msgs <- liveMsg{ended: ended}:
		case <-ctx.Done():
		}
	}()
	logged := false
	for ctx.Err() == nil && stillRunning(ctx, p) {
		err := w.readStream(ctx, p, sessions)
		if errors.Is(err, errUnauthorized) {
			w.log.Warn("cannot follow OpenCode event stream; the database is still read", "pid", p.pid, "addr", p.addr, "err", err)
			return
		}
		if err != nil && ctx.Err() == nil && !logged {
			w.log.Debug("OpenCode event stream dropped; reconnecting", "pid", p.pid, "addr", p.addr, "err", err)
			logged = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(liveReconnect):
		}
	}
	if ctx.Err() == nil {
		w.log.Info("OpenCode process gone; its stream ends", "pid", p.pid, "addr", p.addr)
	}
}

// liveFrame is the part of a /global/event frame the stream looks at:
// {"directory","project","payload":{"type","properties":{"sessionID"}}}.
type liveFrame struct {
	Payload json.RawMessage `json:"payload"`
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
// (heartbeats, plugins) are dropped.
func (w *Watcher) readStream(ctx context.Context, p liveProc, sessions map[string]bool) error {
	// A stream that stays open after its process went (a hung connection)
	// is cut when the process table no longer shows the process.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		tick := time.NewTicker(liveScan)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if !stillRunning(ctx, p) {
					cancel()
					return
				}
			}
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/global/event", nil)
	if err != nil {
		return fmt.Errorf("event stream request: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := liveClient.Do(req)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return errUnauthorized
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("event stream: HTTP %d", resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, readBuffer)
	var data, line []byte
	over := false // the frame passed the line cap: it is dropped
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			line = append(line, chunk...)
			over = len(data)+len(line) > w.opts.LineCap
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("event stream ended")
			}
			return fmt.Errorf("event stream: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch v, isData := bytes.CutPrefix(line, []byte("data:")); {
		case len(line) == 0 && !over:
			if len(data) > 0 {
				w.liveEvent(ctx, p, data, sessions)
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

// liveEvent passes one frame's payload to Run.
func (w *Watcher) liveEvent(ctx context.Context, p liveProc, frame []byte, sessions map[string]bool) {
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
	s := ev.Properties.SessionID
	m := liveMsg{agent: p.agent, path: livePath(p.pid, p.addr, s), session: s, line: bytes.Clone(payload)}
	if !sessions[s] {
		sessions[s], m.first = true, true
	}
	select {
	case w.live.msgs <- m:
	case <-ctx.Done():
	}
}
