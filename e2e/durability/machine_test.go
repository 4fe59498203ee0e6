// Package durability runs the real nudge binary through what a real machine
// does to it: months of history, restarts after a quit and after kill -9,
// files replaced and rewritten, bad lines, a full disk. Nothing may be told
// twice and nothing lost.
package durability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/web"
)

func TestMain(m *testing.M) { daemontest.Main(m) }

// machine is one test's user: a home with agent folders, a data folder,
// and the daemon when it runs.
type machine struct {
	t      *testing.T
	dir    string
	home   string
	data   string
	env    []string
	daemon *daemontest.Daemon
}

// newMachine makes a home; retry is off, so that each dead turn gives
// exactly one Inbox entry, and desktop notifications are off.
func newMachine(t *testing.T, env ...string) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{t: t, dir: dir, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data")}
	if err := os.MkdirAll(m.home, 0o700); err != nil {
		t.Fatal(err)
	}
	m.env = daemontest.Env(m.home, m.data, append([]string{"NUDGE_RETRY_ENABLED=false"}, env...)...)
	return m
}

// start runs the daemon and waits until its first scan is stored.
func (m *machine) start() time.Duration {
	m.t.Helper()
	began := time.Now()
	m.daemon = daemontest.Start(m.t, m.env, "run", "--headless")
	m.daemon.WaitReady(m.t)
	return time.Since(began)
}

// quit stops the daemon cleanly.
func (m *machine) quit() {
	m.t.Helper()
	if _, err := m.nudge("quit"); err != nil {
		m.t.Fatal(err)
	}
	if code := m.daemon.Exit(m.t); code != 0 {
		m.t.Fatalf("nudge quit: exit status %d\n%s", code, m.daemon.Log)
	}
}

// kill ends the daemon with SIGKILL.
func (m *machine) kill() {
	m.t.Helper()
	if err := m.daemon.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		m.t.Fatal(err)
	}
	m.daemon.Exit(m.t)
}

func (m *machine) nudge(args ...string) ([]byte, error) { return daemontest.CLI(m.env, args...) }

func (m *machine) entries() []web.Entry { return daemontest.Entries(m.t, m.env) }

// daemonStatus is the part of `nudge status --json` these tests read.
type daemonStatus struct {
	Ready        bool `json:"ready"`
	FilesWatched int  `json:"files_watched"`
	LinesSkipped int  `json:"lines_skipped"`
	SkippedFiles []struct {
		Path   string `json:"path"`
		Lines  int    `json:"lines"`
		Offset int64  `json:"offset"`
		Reason string `json:"reason"`
	} `json:"skipped_files"`
	StoreFailing *struct {
		Error string `json:"error"`
		Tries int    `json:"tries"`
	} `json:"store_failing"`
}

func (m *machine) status() daemonStatus {
	m.t.Helper()
	out, err := m.nudge("status", "--json")
	if err != nil {
		m.t.Fatal(err)
	}
	var st struct{ Daemon *daemonStatus }
	if err := json.Unmarshal(out, &st); err != nil || st.Daemon == nil {
		m.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return *st.Daemon
}

// events counts the stored events of a session by kind (`nudge explain`).
func (m *machine) events(session string) map[string]int {
	m.t.Helper()
	out, err := m.nudge("explain", "--json", session)
	if err != nil && strings.Contains(err.Error(), "no session "+strconv.Quote(session)) {
		return map[string]int{} // not stored yet: an event waits for the batch it goes out in
	}
	if err != nil {
		m.t.Fatal(err)
	}
	var tl struct{ Events []struct{ Kind string } }
	if err := json.Unmarshal(out, &tl); err != nil {
		m.t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range tl.Events {
		n[e.Kind]++
	}
	return n
}

func (m *machine) eventually(what string, within time.Duration, cond func() bool) {
	m.t.Helper()
	daemontest.Eventually(m.t, what, within, cond)
}

// stays checks that cond holds for the whole period.
func (m *machine) stays(what string, period time.Duration, cond func() bool) {
	m.t.Helper()
	for deadline := time.Now().Add(period); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !cond() {
			m.t.Fatalf("no longer true: %s", what)
		}
	}
}

// transcript is a Claude Code session file in the machine's home.
type transcript struct {
	m       *machine
	session string
	path    string
	n       int
}

func (m *machine) transcript(session string) *transcript {
	path := filepath.Join(m.home, ".claude", "projects", "-home-dev-p", session+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		m.t.Fatal(err)
	}
	return &transcript{m: m, session: session, path: path}
}

// records returns Claude Code records of this session as lines.
func (tr *transcript) records(recs ...map[string]any) string {
	var b strings.Builder
	for _, rec := range recs {
		tr.n++
		rec["sessionId"], rec["cwd"], rec["isSidechain"] = tr.session, "/home/dev/p", false
		if _, ok := rec["uuid"]; !ok {
			rec["uuid"] = fmt.Sprintf("%s-%06d", tr.session[:8], tr.n)
		}
		if _, ok := rec["timestamp"]; !ok {
			rec["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		}
		line, err := json.Marshal(rec)
		if err != nil {
			tr.m.t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// deadTurns are n turns that each died from a provider error.
func (tr *transcript) deadTurns(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(tr.records(prompt(fmt.Sprintf("task %d", i)), apiError500()))
	}
	return b.String()
}

// append adds text at the end of the file.
func (tr *transcript) append(text string) {
	tr.m.t.Helper()
	f, err := os.OpenFile(tr.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		tr.m.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tr.m.t.Fatal(err)
	}
}

func prompt(text string) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text},
		"origin": map[string]any{"kind": "human"}, "promptSource": "typed"}
}

const err500 = "API Error: 500 Internal server error"

func apiError500() map[string]any {
	return map[string]any{"type": "assistant", "isApiErrorMessage": true, "error": "server_error", "apiErrorStatus": 500,
		"message": map[string]any{"model": "<synthetic>", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": err500}}}}
}
