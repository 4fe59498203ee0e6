//go:build torture

// Package torture is the crash and bad-input suite (`make torture`): the
// real nudge binary killed with SIGKILL at random points while sessions are
// written, with retry off (every dead turn exactly one Inbox entry) and on
// with stand-in agents in real tmux (no attempt typed twice, at most 3 per
// dead turn, every dead turn recovered or told), and ten families of bad
// input. It prints its counts and fails on any loss or duplicate.
//
// CI runs it at its default size; NUDGE_TORTURE_SCALE=N runs N times as many
// kills and turns.
package torture

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"

	_ "modernc.org/sqlite"
)

// standin is the stand-in agent of the retry-on suite.
const standin = "nudge/e2e/pipe/standin"

func TestMain(m *testing.M) { daemontest.Main(m, standin) }

// scale multiplies the suite's size (NUDGE_TORTURE_SCALE, default 1).
func scale(t *testing.T) int {
	v := os.Getenv("NUDGE_TORTURE_SCALE")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("NUDGE_TORTURE_SCALE=%q: want a positive number", v)
	}
	return n
}

// world is one user's machine for the suite.
type world struct {
	t      *testing.T
	dir    string
	home   string
	data   string
	env    []string
	daemon *daemontest.Daemon
	kills  int
	db     *sql.DB // read-only, for the checks
}

func newWorld(t *testing.T, env ...string) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data")}
	if err := os.MkdirAll(filepath.Join(w.home, ".claude", "projects", "-home-dev-p"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = daemontest.Env(w.home, w.data, append([]string{"TERM=xterm-256color"}, env...)...)
	return w
}

// start runs the daemon; ready waits for its first scan to be stored.
func (w *world) start(ready bool) {
	w.t.Helper()
	w.daemon = daemontest.Start(w.t, w.env, "run", "--headless")
	if ready {
		w.daemon.WaitReady(w.t)
	}
}

// kill ends the daemon with SIGKILL.
func (w *world) kill() {
	w.t.Helper()
	if err := w.daemon.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		w.t.Fatal(err)
	}
	w.daemon.Exit(w.t)
	w.kills++
}

func (w *world) quit() {
	w.t.Helper()
	if _, err := daemontest.CLI(w.env, "quit"); err != nil {
		w.t.Fatal(err)
	}
	w.daemon.Exit(w.t)
}

// query reads the database directly (the daemon may be down).
func (w *world) query(q string, args ...any) *sql.Rows {
	w.t.Helper()
	if w.db == nil {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(w.data, "nudge.db")+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			w.t.Fatal(err)
		}
		w.db = db
		w.t.Cleanup(func() { db.Close() })
	}
	rows, err := w.db.Query(q, args...)
	if err != nil {
		w.t.Fatal(err)
	}
	return rows
}

// counts runs a query of (key, count) rows.
func (w *world) counts(q string, args ...any) map[string]int {
	w.t.Helper()
	rows := w.query(q, args...)
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			w.t.Fatal(err)
		}
		out[k] += n
	}
	return out
}

// Claude Code records (docs/agents/claude.md §3, §4.2) for every class of dead
// turn; each dead turn's text is unique, to find its Inbox entry.
var classes = []string{"provider_error", "usage_limit", "auth", "rejected", "unknown", "cancelled"}

func deadTurnRecord(class, text string) map[string]any {
	synthetic := func(fields map[string]any) map[string]any {
		rec := map[string]any{"type": "assistant", "isApiErrorMessage": true,
			"message": map[string]any{"model": "<synthetic>", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}}
		for k, v := range fields {
			rec[k] = v
		}
		return rec
	}
	switch class {
	case "provider_error":
		return synthetic(map[string]any{"error": "server_error", "apiErrorStatus": 500})
	case "usage_limit":
		return synthetic(map[string]any{"error": "rate_limit", "apiErrorStatus": 429, "apiError": "usage_limit_reached",
			"quotaLimits": map[string]any{"status": "rejected", "resetsAt": time.Now().Add(time.Hour).Unix()}})
	case "auth":
		return synthetic(map[string]any{"error": "authentication_failed", "apiErrorStatus": 401})
	case "rejected":
		return synthetic(map[string]any{"error": "invalid_request", "apiErrorStatus": 400})
	case "unknown":
		return synthetic(map[string]any{"error": "teapot", "apiErrorStatus": 418})
	}
	// cancelled: the harness's interrupt marker, a legacy user record
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "[Request interrupted by user]"}}
}

// writer appends turns to sessions, as agents do.
type writer struct {
	t        *testing.T
	dir      string
	mu       sync.Mutex
	n        int
	dead     map[string]string // dead turn text → class
	turns    map[string]int    // per session: completed turns
	prompts  int
	sessions []string
}

func newWriter(t *testing.T, dir string, sessions int) *writer {
	wr := &writer{t: t, dir: dir, dead: map[string]string{}, turns: map[string]int{}}
	for i := range sessions {
		wr.sessions = append(wr.sessions, fmt.Sprintf("%08d-0000-4000-8000-%012d", i, i))
	}
	return wr
}

// record is one line of a session.
func (wr *writer) record(session string, rec map[string]any) []byte {
	wr.n++
	rec["sessionId"], rec["cwd"], rec["isSidechain"] = session, "/home/dev/p", false
	rec["uuid"] = fmt.Sprintf("rec-%08d", wr.n)
	rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, err := json.Marshal(rec)
	if err != nil {
		wr.t.Fatal(err)
	}
	return append(b, '\n')
}

// turn appends one turn to a random session: normal, or dead of a random
// class. Sometimes it is written in two pieces, cut in the middle of a line.
func (wr *writer) turn(rnd *rand.Rand) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	session := wr.sessions[rnd.IntN(len(wr.sessions))]
	wr.prompts++
	text := wr.record(session, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("task %d", wr.n)},
		"origin": map[string]any{"kind": "human"}, "promptSource": "typed"})
	if rnd.IntN(2) == 0 {
		wr.turns[session]++
		text = append(text, wr.record(session, map[string]any{"type": "assistant", "message": map[string]any{"id": fmt.Sprintf("msg_%d", wr.n),
			"model": "claude-opus-5-5", "stop_reason": "end_turn", "content": []any{map[string]any{"type": "text", "text": "Done."}}}})...)
		text = append(text, wr.record(session, map[string]any{"type": "system", "subtype": "turn_duration", "durationMs": 10})...)
	} else {
		class := classes[rnd.IntN(len(classes))]
		msg := fmt.Sprintf("torture dead turn %d (%s)", wr.n, class)
		wr.dead[msg] = class
		text = append(text, wr.record(session, deadTurnRecord(class, msg))...)
	}
	path := filepath.Join(wr.dir, session+".jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		wr.t.Fatal(err)
	}
	defer f.Close()
	if cut := rnd.IntN(len(text)); rnd.IntN(4) == 0 {
		f.Write(text[:cut])
		time.Sleep(time.Duration(rnd.IntN(20)) * time.Millisecond)
		text = text[cut:]
	}
	if _, err := f.Write(text); err != nil {
		wr.t.Fatal(err)
	}
}

// TestCrashRetryOff: SIGKILL at random points while 30 sessions get normal
// turns and dead turns of every class; retry off. At the end every dead
// turn has exactly one Inbox entry (a cancelled turn none), and every
// record's events are stored once.
func TestCrashRetryOff(t *testing.T) {
	k := scale(t)
	w := newWorld(t, "NUDGE_RETRY_ENABLED=false")
	wr := newWriter(t, filepath.Join(w.home, ".claude", "projects", "-home-dev-p"), 30)
	w.start(true) // the first look: everything written after it is told
	w.kill()

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		wrnd := rand.New(rand.NewPCG(rnd.Uint64(), 2))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(2+wrnd.IntN(12)) * time.Millisecond):
				wr.turn(wrnd)
			}
		}
	}()
	for range 15 * k {
		w.start(false)
		time.Sleep(time.Duration(50+rnd.IntN(1200)) * time.Millisecond)
		w.kill()
		time.Sleep(time.Duration(rnd.IntN(300)) * time.Millisecond)
	}
	close(stop)
	<-done

	w.start(true)
	want := 0
	for _, class := range wr.dead {
		if class != "cancelled" {
			want++
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	var entries map[string]int
	for {
		entries = w.counts("SELECT error_text, count(*) FROM entries GROUP BY error_text")
		total := 0
		for _, n := range entries {
			total += n
		}
		if total >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second) // anything late would be a duplicate
	entries = w.counts("SELECT error_text, count(*) FROM entries GROUP BY error_text")
	w.quit()

	lost, dup, extra := 0, 0, 0
	byClass := map[string]int{}
	for msg, class := range wr.dead {
		byClass[class]++
		switch n := entries[msg]; {
		case class == "cancelled":
		case n == 0:
			lost++
			t.Errorf("lost: %q has no Inbox entry", msg)
		case n > 1:
			dup++
			t.Errorf("duplicate: %q has %d Inbox entries", msg, n)
		}
	}
	for msg, n := range entries {
		if _, ok := wr.dead[msg]; !ok {
			extra += n
			t.Errorf("an entry for no dead turn: %q ×%d", msg, n)
		}
	}
	kinds := w.counts("SELECT kind, count(*) FROM events GROUP BY kind")
	turns := 0
	for _, n := range wr.turns {
		turns += n
	}
	if kinds["turn_failed"] != len(wr.dead) || kinds["turn_done"] != turns || kinds["user_message"] != wr.prompts {
		t.Errorf("events %v: want %d turn_failed, %d turn_done, %d user_message, each record once", kinds, len(wr.dead), turns, wr.prompts)
	}
	t.Logf("retry off: %d kills; %d turns written to 30 sessions, %d dead (%v); %d entries wanted, %d lost, %d duplicated, %d for nothing; events %v",
		w.kills, wr.prompts, len(wr.dead), byClass, want, lost, dup, extra, kinds)
}
