// Command perf measures the real daemon side by side in one run: start-up
// against `find` over the same history, idle CPU, memory and descriptors,
// busy agents, and detection latency, for each way of watching folders
// (docs/performance.md). Histories are made from the repo's samples and
// cached outside the checkout.
package main

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"nudge/internal/classify"
	nudged "nudge/internal/daemon"
	"nudge/internal/history"
	"nudge/internal/samples"
	"nudge/internal/watch/disk"

	_ "modernc.org/sqlite"
)

func main() {
	sizes := flag.String("sizes", "2000,20000", "history sizes, in session files")
	watchers := flag.String("watchers", "auto,folders", "ways of seeing changes (watch.events): auto is inotify here; folders is the macOS design")
	idle := flag.Duration("idle", 60*time.Second, "how long idle CPU is measured")
	busy := flag.Duration("busy", 20*time.Second, "how long each busy-agents row runs")
	long := flag.Bool("long", false, "add the long rows: 500 sessions × 20 records/s")
	only := flag.String("rows", "", "busy rows to run instead of the usual ones, as sessions×records/s: 200x20,1x2000; -rows= runs none")
	nudge := flag.String("nudge", "", "nudge binary (default: build ./cmd/nudge)")
	cache := flag.String("cache", "", "where histories are kept (default: $XDG_CACHE_HOME/nudge-bench)")
	flag.Parse()

	work, err := os.MkdirTemp("", "nudge-perf-")
	check(err)
	defer os.RemoveAll(work)
	if *nudge == "" {
		*nudge = filepath.Join(work, "nudge")
		build := exec.Command("go", "build", "-o", *nudge, "./cmd/nudge")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		check(build.Run())
	}
	if *cache == "" {
		*cache = cacheDir()
	}
	rows := []busyRow{{1, 2000}, {50, 20}, {200, 20}}
	if *long {
		rows = append(rows, busyRow{500, 20})
	}
	if isSet("rows") {
		rows = parseRows(*only)
	}
	b := &bench{nudge: *nudge, work: work, idle: *idle, busy: *busy}
	empty := b.emptyStart()
	var cols []column
	for _, n := range ints(*sizes) {
		home := historyHome(*cache, n)
		for _, mode := range strings.Split(*watchers, ",") {
			log.Printf("%d files, %s: measuring", n, mode)
			cols = append(cols, b.measure(home, n, mode, rows))
		}
	}
	report(os.Stdout, cols, rows, empty)
}

// emptyStart is the best of three first starts on a home with no history:
// what a start costs before any file.
func (b *bench) emptyStart() time.Duration {
	best := time.Duration(1 << 62)
	for i := range 3 {
		home := filepath.Join(b.work, fmt.Sprint("empty-", i))
		check(os.MkdirAll(home, 0o700))
		data := filepath.Join(b.work, fmt.Sprint("data-empty-", i))
		d := b.start(b.env(home, data, "auto"), data)
		best = min(best, d.ready)
		d.stop()
	}
	return best
}

// bench holds what every measurement shares.
type bench struct {
	nudge      string
	work       string
	idle, busy time.Duration
}

// loneGap parts the records of the lone-record detection: longer than the
// folder-level design's latency, so each comes after a quiet moment, as a
// dead turn does.
const loneGap = 400 * time.Millisecond

// busyRow is sessions × records per second each.
type busyRow struct{ sessions, rate int }

func (r busyRow) String() string { return fmt.Sprintf("%d × %d records/s", r.sessions, r.rate) }

// column is what one history size and watcher gave.
type column struct {
	files                int
	mode                 string
	find, findStat       time.Duration
	first, second        time.Duration
	cpuPerMin            float64 // idle CPU seconds per minute
	wakesPerMin          float64 // idle context switches of all its threads per minute
	rss, rssAfter        int     // KB, after the first scan and after a restart, idle
	anon, anonAfter      int     // their anonymous part
	asked, askedAfter    int     // KB, the same 3 s after a request
	fds, fdsAfter        int
	detectP50, detectP99 time.Duration // records 20 ms apart
	loneP50, loneP99     time.Duration // records loneGap apart: each after a quiet moment
	busy                 []busyFigure
}

type busyFigure struct {
	core     float64 // share of one core
	p50, p99 time.Duration
	lines    int // records written, each one write
	bytes    int64
	rate     float64 // bytes written per second
	writes   float64 // records written per second
}

// measure starts the daemon on home twice (a first start, then a restart),
// measuring each start, the idle daemon, detection, and the busy rows.
func (b *bench) measure(home string, files int, mode string, rows []busyRow) column {
	leftovers, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "-bench-*"))
	rollouts, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "2026", "12", "bench-*"))
	for _, l := range append(append(leftovers, rollouts...), filepath.Join(home, ".local")) {
		check(os.RemoveAll(l)) // of a run that was stopped
	}
	c := column{files: files, mode: mode, find: b.find(home, "-type", "f"), findStat: b.find(home, "-type", "f", "-printf", "%s %T@\n"),
		first: 1 << 62, second: 1 << 62}
	// Each start is the best of three, as find is: a first start on a
	// fresh data folder each time, then restarts on the last one's.
	var d *daemon
	var env []string
	for i := range 3 {
		if d != nil {
			d.stop()
		}
		data := filepath.Join(b.work, fmt.Sprintf("data-%d-%s-%d", files, mode, i))
		env = b.env(home, data, mode)
		d = b.start(env, data)
		c.first = min(c.first, d.ready)
	}
	c.asked, c.rss, c.anon = d.idleRSS()
	c.fds = d.fds()
	c.cpuPerMin, c.wakesPerMin = d.idleCPU(b.idle)
	for range 3 {
		d.stop()
		d = b.start(env, d.data)
		c.second = min(c.second, d.ready)
	}
	c.askedAfter, c.rssAfter, c.anonAfter = d.idleRSS()
	c.fdsAfter = d.fds()
	defer d.stop()

	w := newWriter(home, "claude", "interactive-main.jsonl", fmt.Sprintf("detect-%d-%s", files, mode))
	lat := w.detect(d, 300, 20*time.Millisecond)
	w.remove()
	c.detectP50, c.detectP99 = quantile(lat, 0.5), quantile(lat, 0.99)
	w = newWriter(home, "claude", "interactive-main.jsonl", fmt.Sprintf("lone-%d-%s", files, mode))
	lat = w.detect(d, 20, loneGap)
	w.remove()
	c.loneP50, c.loneP99 = quantile(lat, 0.5), quantile(lat, 0.99)
	for _, r := range rows {
		c.busy = append(c.busy, b.busyRun(d, home, fmt.Sprintf("busy-%d-%s-%d", files, mode, r.sessions), r))
	}
	return c
}

// env is the daemon's environment: home as HOME, nothing of the caller's
// agents, no notifications, no retries.
func (b *bench) env(home, data, mode string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "NUDGE_") || strings.HasSuffix(k, "_HOME") || k == "HOME" || k == "CLAUDE_CONFIG_DIR" || k == "KIMI_SHARE_DIR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "NUDGE_DATA_DIR="+data, "NUDGE_NOTIFY_DESKTOP=false", "NUDGE_RETRY_ENABLED=false",
		"NUDGE_LOG_FILE="+filepath.Join(b.work, "nudge.log"), "NUDGE_WATCH_EVENTS="+mode)
}

// find times `find` over the history (the best of three, after one run that
// warms the caches).
func (b *bench) find(home string, args ...string) time.Duration {
	best := time.Duration(1 << 62)
	for i := range 4 {
		start := time.Now()
		cmd := exec.Command("find", append([]string{home}, args...)...)
		check(cmd.Run())
		if i > 0 {
			best = min(best, time.Since(start))
		}
	}
	return best
}

// daemon is one running `nudge run`.
type daemon struct {
	cmd    *exec.Cmd
	data   string // its data folder
	socket string
	ready  time.Duration // from exec to the first scan stored
	client *http.Client
	exited chan struct{}
}

func (b *bench) start(env []string, data string) *daemon {
	check(os.MkdirAll(data, 0o700))
	socket := filepath.Join(data, "nudge.sock")
	d := &daemon{data: data, socket: socket, client: &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}}}}
	d.cmd = exec.Command(b.nudge, "run", "--headless", "--log-level", "warn")
	d.cmd.Env = env
	start := time.Now()
	check(d.cmd.Start())
	d.exited = make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	for time.Since(start) < 5*time.Minute {
		select {
		case <-d.exited:
			log.Fatalf("the daemon stopped: %s; see %s", d.cmd.ProcessState, filepath.Join(b.work, "nudge.log"))
		default:
		}
		if d.isReady() {
			d.ready = time.Since(start)
			return d
		}
		time.Sleep(5 * time.Millisecond)
	}
	log.Fatal("the daemon did not become ready")
	return nil
}

func (d *daemon) isReady() bool {
	resp, err := d.client.Get("http://nudge/status")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct{ Daemon *struct{ Ready bool } }
	return json.NewDecoder(resp.Body).Decode(&st) == nil && st.Daemon != nil && st.Daemon.Ready
}

func (d *daemon) stop() {
	d.client.CloseIdleConnections()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	<-d.exited
}

// cpu is the daemon's CPU time so far, its children's included.
func (d *daemon) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	check(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		n, err := strconv.ParseInt(f[i], 10, 64)
		check(err)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// idleCPU is the daemon's CPU seconds and the context switches of all its
// threads, each per minute, over window.
func (d *daemon) idleCPU(window time.Duration) (cpu, switches float64) {
	before, sw := d.cpu(), d.switches()
	time.Sleep(window)
	return (d.cpu() - before).Seconds() / window.Minutes(), float64(d.switches()-sw) / window.Minutes()
}

// switches is how often the daemon's threads have stopped running so far,
// on their own (a wait: each is a wake-up after it) or taken off a core:
// voluntary_ctxt_switches and nonvoluntary_ctxt_switches of every
// /proc/PID/task/TID/status. The Go runtime keeps its threads, so none
// that counted is gone by the next reading.
func (d *daemon) switches() int {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", d.cmd.Process.Pid))
	check(err)
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(l, ":")
			if k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches" {
				c, err := strconv.Atoi(strings.TrimSpace(v))
				check(err)
				n += c
			}
		}
	}
	return n
}

// idleRSS reads the daemon's resident memory in KB 3 s after the status
// request that found it ready, and again once it has given back what that
// request mapped (GiveBackAfterRequest, docs/performance.md §3): all
// of it and its anonymous part.
func (d *daemon) idleRSS() (asked, all, anon int) {
	time.Sleep(3 * time.Second)
	asked, _ = d.rss()
	time.Sleep(nudged.GiveBackAfterRequest)
	all, anon = d.rss()
	return asked, all, anon
}

// rss is the daemon's resident memory in KB: all of it, and its anonymous
// part (without the pages of the program file it has touched).
func (d *daemon) rss() (all, anon int) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	check(err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), ":")
		n, _ := strconv.Atoi(strings.Fields(v + " 0")[0])
		switch k {
		case "VmRSS":
			all = n
		case "RssAnon":
			anon = n
		}
	}
	return all, anon
}

func (d *daemon) fds() int {
	names, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", d.cmd.Process.Pid))
	check(err)
	return len(names)
}

// writer appends the records of an agent at work, taken from a captured
// session file, to session files of its own, as the agent does: each
// record one write of its own. The records before the first event open
// each file (Codex's session_meta); then each turn is its opening (from
// the first event to the person's prompt), turnRecords records of the
// agent at work (answers, tool calls and results) and the turn's end.
// Every record is stamped when written and has ids of its own.
type writer struct {
	agent       string
	dir         string
	name        func(id string) string // a session's file name
	head, open  []string
	work        []string
	done        string
	ids         []string // the ids in the sample
	turnRecords int
}

var (
	stamp = regexp.MustCompile(`"timestamp":"[^"]*"`)
	// sessionIDs find a session's id in its records.
	sessionIDs = map[string]*regexp.Regexp{
		"claude": regexp.MustCompile(`"sessionId":"([^"]*)"`),
		"codex":  regexp.MustCompile(`"type":"session_meta".*?"id":"([0-9a-f-]{36})"`),
	}
)

// stampLayout is the time a record is stamped with: fixed in width, so a
// record's bytes are patched in place.
const stampLayout = "2006-01-02T15:04:05.000000Z"

// newWriter is a writer of Claude Code transcripts (agent "claude") or
// Codex rollouts ("codex") from the sample, into a folder of home's named
// by project.
func newWriter(home, agent, sample, project string) *writer {
	path := samples.Dir(agent, sample)
	b, err := os.ReadFile(path)
	check(err)
	w := &writer{agent: agent, ids: history.IDs(string(b)), turnRecords: 200}
	switch agent {
	case "claude":
		w.dir = filepath.Join(home, ".claude", "projects", "-bench-"+project)
		w.name = func(id string) string { return id + ".jsonl" }
	case "codex":
		w.dir = filepath.Join(home, ".codex", "sessions", "2026", "12", "bench-"+project)
		w.name = func(id string) string { return "rollout-2026-12-04T00-00-00-" + id + ".jsonl" }
	}
	check(os.RemoveAll(w.dir))
	check(os.MkdirAll(w.dir, 0o700))
	a, _ := classify.Lookup(agent)
	r := a.NewReader(path, disk.Files{})
	prompted := false
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var kinds []classify.Kind
		for _, ev := range r.Read([]byte(l)) {
			kinds = append(kinds, ev.Kind)
		}
		l += "\n"
		switch {
		case len(w.open) == 0 && len(kinds) == 0:
			w.head = append(w.head, l)
		case !prompted:
			w.open = append(w.open, l)
			prompted = len(kinds) > 0 && kinds[0] == classify.UserMessage
		case w.done == "" && slices.Equal(kinds, []classify.Kind{classify.TurnDone}):
			w.done = l
		case len(kinds) > 0 && !slices.ContainsFunc(kinds, func(k classify.Kind) bool { return k != classify.AgentActivity }):
			w.work = append(w.work, l)
		}
	}
	if !prompted || w.done == "" || len(w.work) == 0 {
		log.Fatalf("%s: no prompt, turn end or records of work to write", path)
	}
	return w
}

// recorder is one session being written: by a file of its own, or by
// rows of a database.
type recorder interface {
	// write writes the session's next record, stamped now; it returns its
	// size.
	write() int
	close()
}

// session is one session file being written.
type session struct {
	id      string
	n       int
	f       *os.File
	records [][]byte // a turn's, with this session's ids; head first
	head    int      // how many of records open the file only
	next    int
	stamps  [][]int // each record's places of its stamps
	uuids   [][]int // and of its record ids
}

func (w *writer) session(i int) *session {
	ids := history.NewIDs(w.ids, fmt.Sprintf("%s/%d", w.dir, i))
	placeholder := `"timestamp":"` + stampLayout + `"`
	s := &session{n: i, head: len(w.head)}
	var lines []string
	lines = append(lines, w.head...)
	lines = append(lines, w.open...)
	for k := range w.turnRecords {
		lines = append(lines, w.work[k%len(w.work)])
	}
	for _, l := range append(lines, w.done) {
		l = stamp.ReplaceAllLiteralString(ids.Replace(l), placeholder)
		s.records = append(s.records, []byte(l))
		s.stamps = append(s.stamps, places(l, `"timestamp":"`))
		s.uuids = append(s.uuids, places(l, `"uuid":"`))
	}
	s.id = sessionIDs[w.agent].FindStringSubmatch(string(bytes.Join(s.records, nil)))[1]
	f, err := os.OpenFile(filepath.Join(w.dir, w.name(s.id)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	check(err)
	s.f = f
	return s
}

// places are where the values after each key start in l.
func places(l, key string) []int {
	var out []int
	for at := 0; ; {
		i := strings.Index(l[at:], key)
		if i < 0 {
			return out
		}
		at += i + len(key)
		out = append(out, at)
	}
}

func (s *session) write() int {
	k := s.next
	if k >= len(s.records) {
		k = s.head + (k-s.head)%(len(s.records)-s.head)
	}
	s.next++
	rec := s.records[k]
	now := time.Now().UTC().AppendFormat(nil, stampLayout)
	for _, at := range s.stamps[k] {
		copy(rec[at:], now)
	}
	for _, at := range s.uuids[k] {
		copy(rec[at:], fmt.Appendf(nil, "%08x-0000-4000-8000-%012x", s.n, s.next))
	}
	_, err := s.f.Write(rec) // one write, as the agents' own
	check(err)
	return len(rec)
}

func (s *session) close() { s.f.Close() }

// openCode writes OpenCode's database as its processes do: each record one
// row committed on its own, in the one database of every session
// (docs/agents/opencode.md §2.1). It starts as a copy of a sample; each
// session's rows are its work rows (the parts of answers streamed), each
// with an id of its own.
type openCode struct {
	root string // the folder made for it, which no history has
	path string
	db   *sql.DB
	work []eventRow
}

// eventRow is a row of OpenCode's event table.
type eventRow struct{ typ, data, session string }

// openCodeSample is the captured database the writer starts from.
const openCodeSample = "ok"

func newOpenCode(home string) *openCode {
	dir := filepath.Join(home, ".local", "share", "opencode")
	check(os.RemoveAll(dir))
	check(os.MkdirAll(dir, 0o700))
	o := &openCode{root: filepath.Join(home, ".local"), path: filepath.Join(dir, "opencode.db")}
	b, err := os.ReadFile(samples.Dir("opencode", openCodeSample+".opencode.db"))
	check(err)
	check(os.WriteFile(o.path, b, 0o600))
	db, err := sql.Open("sqlite", "file:"+o.path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(wal)")
	check(err)
	db.SetMaxOpenConns(1)
	o.db = db
	rows, err := db.Query(`SELECT type, data, aggregate_id FROM event WHERE type = 'message.part.updated.1' ORDER BY seq`)
	check(err)
	for rows.Next() {
		var r eventRow
		check(rows.Scan(&r.typ, &r.data, &r.session))
		o.work = append(o.work, r)
	}
	check(rows.Err())
	if len(o.work) == 0 {
		log.Fatalf("%s: no rows of work to write", o.path)
	}
	return o
}

// openCodeSession is one session's rows.
type openCodeSession struct {
	o    *openCode
	id   string
	next int
}

func (o *openCode) session(i int) *openCodeSession {
	return &openCodeSession{o: o, id: fmt.Sprintf("ses_bench%017d", i)}
}

func (s *openCodeSession) write() int {
	r := s.o.work[s.next%len(s.o.work)]
	s.next++
	data := strings.ReplaceAll(r.data, r.session, s.id)
	_, err := s.o.db.Exec(`INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)`,
		fmt.Sprintf("evt_%s_%d", s.id, s.next), s.id, 1000+s.next, r.typ, data)
	check(err)
	return len(data)
}

func (s *openCodeSession) close() {}

// remove deletes the database, again while the daemon's own connection
// makes its -wal and -shm files anew.
func (o *openCode) remove() {
	check(o.db.Close())
	var err error
	for range 50 {
		if err = os.RemoveAll(o.root); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	check(err)
}

// detect appends n user messages to one session, gap apart, and returns
// how long each took from being written to being stored.
func (w *writer) detect(d *daemon, n int, gap time.Duration) []time.Duration {
	s := w.session(0)
	defer s.f.Close()
	for i := range n {
		time.Sleep(gap) // the first too: after the new file, as between records
		rec := map[string]any{"type": "user", "sessionId": s.id, "cwd": "/bench", "isSidechain": false, "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "promptSource": "typed", "origin": map[string]string{"kind": "human"},
			"message": map[string]any{"role": "user", "content": fmt.Sprintf("message %d", i)}}
		b, _ := json.Marshal(rec)
		_, err := s.f.Write(append(b, '\n'))
		check(err)
	}
	return d.latencies([]string{s.id}, n)
}

// remove deletes the writer's files, so the cached history stays as it
// was generated: its folder, and the one above it if that is empty now
// (made for a Codex writer's).
func (w *writer) remove() {
	check(os.RemoveAll(w.dir))
	_ = os.Remove(filepath.Dir(w.dir)) // refused while it holds the history's
}

// agentOf is the agent busy session i is of: of every eight, five Claude
// Code transcripts, two Codex rollouts and one OpenCode session, a lone
// session Claude Code's.
func agentOf(i int) string {
	switch i % 8 {
	case 3, 6:
		return "codex"
	case 5:
		return "opencode"
	}
	return "claude"
}

// due is a session and when its next record is written.
type due struct {
	at time.Time
	s  recorder
}

// dueHeap orders sessions by their next record's time.
type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// busyRun runs one busy-agents row on the running daemon d: each session
// writes its records at its rate, evenly, at a moment of its own (its
// phase), one write each, so the writes of sessions do not come together.
func (b *bench) busyRun(d *daemon, home, project string, r busyRow) busyFigure {
	writers := map[string]*writer{
		"claude": newWriter(home, "claude", "interactive-main.jsonl", project),
		"codex":  newWriter(home, "codex", "tui-session-full.jsonl", project),
	}
	var oc *openCode
	var ids []string
	h := make(dueHeap, 0, r.sessions)
	period := time.Second / time.Duration(r.rate)
	start := time.Now()
	for i := range r.sessions {
		var s recorder
		if a := agentOf(i); a == "opencode" {
			if oc == nil {
				oc = newOpenCode(home)
			}
			s = oc.session(i)
		} else {
			fs := writers[a].session(i)
			ids = append(ids, fs.id)
			s = fs
		}
		h = append(h, due{start.Add(period * time.Duration(i) / time.Duration(r.sessions)), s})
	}
	heap.Init(&h)
	var fig busyFigure
	before := d.cpu()
	for {
		next := &h[0]
		wait := time.Until(next.at)
		if next.at.Sub(start) >= b.busy {
			break
		}
		if wait > 0 {
			time.Sleep(wait)
		}
		fig.bytes += int64(next.s.write())
		fig.lines++
		next.at = next.at.Add(period)
		heap.Fix(&h, 0)
	}
	written := time.Since(start)
	time.Sleep(time.Second) // the last lines
	fig.core = (d.cpu() - before).Seconds() / time.Since(start).Seconds()
	fig.rate = float64(fig.bytes) / written.Seconds()
	fig.writes = float64(fig.lines) / written.Seconds()
	for _, e := range h {
		e.s.close()
	}
	lat := d.latencies(ids, 0)
	for _, w := range writers {
		w.remove()
	}
	if oc != nil {
		oc.remove()
	}
	fig.p50, fig.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	return fig
}

// latencies asks `nudge explain --json` for each session's stored events
// and returns, for each, its detection time minus the record's own time.
func (d *daemon) latencies(ids []string, want int) []time.Duration {
	var lat []time.Duration
	for _, id := range ids {
		deadline := time.Now().Add(10 * time.Second)
		for {
			cmd := exec.Command(d.cmd.Path, "explain", "--json", id)
			cmd.Env = d.cmd.Env
			out, err := cmd.Output()
			var tl struct {
				Events []struct {
					Time       *time.Time
					DetectedAt time.Time `json:"detected_at"`
				}
			}
			if err == nil && json.Unmarshal(out, &tl) == nil && (want == 0 || len(tl.Events) >= want || time.Now().After(deadline)) {
				for _, e := range tl.Events {
					if e.Time != nil {
						lat = append(lat, e.DetectedAt.Sub(*e.Time))
					}
				}
				break
			}
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return lat
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return -1
	}
	slices.Sort(d)
	return d[int(q*float64(len(d)-1))]
}

// report prints the columns side by side.
func report(out *os.File, cols []column, rows []busyRow, empty time.Duration) {
	host, _ := os.Hostname()
	fmt.Fprintf(out, "\nnudge side by side, %s, %s, %d CPUs\n", time.Now().Format("2006-01-02"), host, numCPU())
	fmt.Fprintf(out, "a start with no history at all: ready in %s\n\n", secs(empty))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(name string, f func(c column) string) {
		fmt.Fprint(tw, name+"\t")
		for _, c := range cols {
			fmt.Fprint(tw, f(c)+"\t")
		}
		fmt.Fprintln(tw)
	}
	line("history (files) / watcher", func(c column) string { return fmt.Sprintf("%d %s", c.files, c.mode) })
	line("find -type f over the tree", func(c column) string { return secs(c.find) })
	line("find -printf size, time (a stat a file)", func(c column) string { return secs(c.findStat) })
	start := func(d time.Duration, c column) string {
		return fmt.Sprintf("%s (%.1f× / %.1f×)", secs(d), ratio(d, c.find), ratio(d, c.findStat))
	}
	line("first start → ready (× each find)", func(c column) string { return start(c.first, c) })
	line("second start → ready (× each find)", func(c column) string { return start(c.second, c) })
	line("idle CPU s/min", func(c column) string { return fmt.Sprintf("%.3f", c.cpuPerMin) })
	line("idle wake-ups/min (context switches, all threads)", func(c column) string { return fmt.Sprintf("%.1f", c.wakesPerMin) })
	line("idle RSS MB (first scan / restart)", func(c column) string {
		return fmt.Sprintf("%.1f / %.1f", float64(c.rss)/1024, float64(c.rssAfter)/1024)
	})
	line("  of it anonymous (not the program file)", func(c column) string {
		return fmt.Sprintf("%.1f / %.1f", float64(c.anon)/1024, float64(c.anonAfter)/1024)
	})
	line("  3 s after a request", func(c column) string {
		return fmt.Sprintf("%.1f / %.1f", float64(c.asked)/1024, float64(c.askedAfter)/1024)
	})
	line("open fds (first scan / restart)", func(c column) string { return fmt.Sprintf("%d / %d", c.fds, c.fdsAfter) })
	line("detection p50 / p99 (1 session)", func(c column) string { return ms(c.detectP50) + " / " + ms(c.detectP99) })
	line(fmt.Sprintf("  of a lone record (%s apart)", loneGap), func(c column) string { return ms(c.loneP50) + " / " + ms(c.loneP99) })
	for i, r := range rows {
		line("busy "+r.String()+": core", func(c column) string {
			f := c.busy[i]
			return fmt.Sprintf("%.1f %% (%.0f writes/s, %.1f MB/s)", 100*f.core, f.writes, f.rate/1e6)
		})
		line("busy "+r.String()+": p50 / p99", func(c column) string { return ms(c.busy[i].p50) + " / " + ms(c.busy[i].p99) })
	}
	tw.Flush()
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
func secs(d time.Duration) string      { return fmt.Sprintf("%.3f s", d.Seconds()) }
func ms(d time.Duration) string {
	if d < 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		check(err)
		out = append(out, n)
	}
	return out
}

// parseRows reads busy rows written as sessions×records/s: "200x20,1x2000".
func parseRows(s string) []busyRow {
	var rows []busyRow
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, r, ok := strings.Cut(f, "x")
		if !ok {
			log.Fatalf("-rows: %q is not sessions×records/s, such as 200x20", f)
		}
		rows = append(rows, busyRow{ints(n)[0], ints(r)[0]})
	}
	return rows
}

// isSet reports whether the named flag was given.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// cacheDir is where generated histories are kept between runs.
func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nudge-bench")
	}
	d, err := os.UserCacheDir()
	check(err)
	return filepath.Join(d, "nudge-bench")
}

// historyHome is a home folder holding n session files of history,
// generated once.
func historyHome(cache string, n int) string {
	home := filepath.Join(cache, fmt.Sprintf("history-%d", n))
	if _, err := os.Stat(filepath.Join(home, ".complete")); err == nil {
		return home
	}
	log.Printf("writing a history of %d session files under %s (once)", n, home)
	check(os.RemoveAll(home))
	_, err := history.Write(home, n)
	check(err)
	check(os.WriteFile(filepath.Join(home, ".complete"), nil, 0o600))
	return home
}

func check(err error) {
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		log.Fatal(err)
	}
}
