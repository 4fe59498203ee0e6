// Package pipe runs the real nudge binary end to end against a stand-in
// Claude Code session in a real tmux pane, with a recording notification
// server on a private D-Bus session.
package pipe

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"nudge/e2e/daemontest"
	"nudge/internal/dbustest"
	"nudge/internal/testenv"
)

// standin is the package of the stand-in Claude Code session; museStandin
// that of the stand-in Muse (muse_test.go).
const (
	standin     = "nudge/e2e/pipe/standin"
	museStandin = "nudge/e2e/pipe/muse"
)

func TestMain(m *testing.M) { daemontest.Main(m, standin, museStandin) }

// world is one test's machine: a home, a tmux server, a D-Bus session with
// a recording notification server, and the nudge daemon.
type world struct {
	t        *testing.T
	dir      string
	home     string
	data     string
	sock     string // tmux server socket
	busAddr  string
	notes    *dbustest.Recorder
	daemon   *daemontest.Daemon
	env      []string
	received string // what the stand-in's pane received, one line each
	pane     string
}

const continuation = "nudge-test: the last attempt failed with a provider error; continue where you left off"

func newWorld(t *testing.T, delays string) *world {
	t.Helper()
	testenv.Need(t, "tmux")
	dir := t.TempDir()
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), data: filepath.Join(dir, "data"),
		sock: filepath.Join(dir, "tmux.sock"), received: filepath.Join(dir, "received.log")}
	must(t, os.MkdirAll(filepath.Join(w.home, "project"), 0o700))
	w.busAddr = dbustest.StartBus(t)
	w.notes = dbustest.Record(t, w.busAddr)
	w.env = []string{
		"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "NUDGE_DATA_DIR=" + w.data,
		"DBUS_SESSION_BUS_ADDRESS=" + w.busAddr, "TERM=xterm-256color",
		"NUDGE_RETRY_DELAYS=" + delays, "NUDGE_RETRY_MESSAGE=" + continuation,
		"NUDGE_RETRY_BOX_FIRST_CHECK=500ms", "NUDGE_RETRY_BOX_MAX_GAP=1s", "NUDGE_RETRY_BOX_GIVE_UP=1m",
		"NUDGE_WATCH_RESCAN=1s",
	}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", w.sock, "kill-server").Run()
		if t.Failed() {
			if b, err := os.ReadFile(w.received); err == nil {
				t.Logf("pane received:\n%s", b)
			}
		}
	})
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// startDaemon runs `nudge run --headless` and waits until its first scan is done.
func (w *world) startDaemon(extraEnv ...string) {
	w.t.Helper()
	w.daemon = daemontest.Start(w.t, append(append([]string{}, w.env...), extraEnv...), "run", "--headless")
	w.daemon.WaitReady(w.t)
}

// startAgent runs the stand-in session in a tmux pane with these outcomes.
func (w *world) startAgent(outcomes string, extra ...string) {
	w.t.Helper()
	args := []string{"-S", w.sock, "-f", "/dev/null", "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50",
		"-c", filepath.Join(w.home, "project")}
	for _, kv := range w.env {
		args = append(args, "-e", kv)
	}
	args = append(args, strings.Join(append([]string{daemontest.Bin(standin), "-outcomes", outcomes, "-received", w.received}, extra...), " "))
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		w.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	w.pane = "agent:0.0"
	w.eventually("stand-in registered", 10*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(w.home, ".claude", "sessions", "*.json"))
		return len(m) == 1
	})
}

// typeLine types text and Enter into the agent's pane, as a person would.
func (w *world) typeLine(text string) {
	w.t.Helper()
	for _, args := range [][]string{{"send-keys", "-t", w.pane, "-l", "--", text}, {"send-keys", "-t", w.pane, "Enter"}} {
		if out, err := exec.Command("tmux", append([]string{"-S", w.sock}, args...)...).CombinedOutput(); err != nil {
			w.t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
	}
}

func (w *world) receivedLines() []string {
	b, _ := os.ReadFile(w.received)
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (w *world) continuations() int {
	n := 0
	for _, l := range w.receivedLines() {
		if l == continuation {
			n++
		}
	}
	return n
}

// nudge runs the CLI against the world's daemon.
func (w *world) nudge(args ...string) ([]byte, error) { return daemontest.CLI(w.env, args...) }

type entry struct {
	ID        int64  `json:"id"`
	Agent     string `json:"agent"`
	Session   string `json:"session"`
	Project   string `json:"project"`
	What      string `json:"what"`
	ErrorText string `json:"error_text"`
	Class     string `json:"class"`
	Attempts  int    `json:"attempts"`
}

func (w *world) inbox() []entry {
	w.t.Helper()
	out, err := w.nudge("inbox", "--json")
	must(w.t, err)
	var es []entry
	must(w.t, json.Unmarshal(out, &es))
	return es
}

type sessionState struct {
	Agent, Session, State string
	RetryAt               *time.Time `json:"retry_at"`
	ResetAt               *time.Time `json:"reset_at"`
}

func (w *world) sessions() []sessionState {
	w.t.Helper()
	out, err := w.nudge("status", "--json")
	must(w.t, err)
	var st struct{ Sessions []sessionState }
	must(w.t, json.Unmarshal(out, &st))
	return st.Sessions
}

func (w *world) state() string {
	ss := w.sessions()
	if len(ss) != 1 {
		return fmt.Sprintf("%d sessions", len(ss))
	}
	return ss[0].State
}

// eventually polls cond until it holds or the deadline passes.
func (w *world) eventually(what string, within time.Duration, cond func() bool) {
	w.t.Helper()
	daemontest.Eventually(w.t, what, within, cond)
}

// never checks that cond stays false for the whole period.
func (w *world) never(what string, period time.Duration, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(period)
	for time.Now().Before(deadline) {
		if cond() {
			w.t.Fatalf("happened although it must not: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *world) agentPID() int {
	w.t.Helper()
	m, _ := filepath.Glob(filepath.Join(w.home, ".claude", "sessions", "*.json"))
	if len(m) != 1 {
		w.t.Fatalf("want one live registry file, have %v", m)
	}
	var pid int
	_, err := fmt.Sscanf(filepath.Base(m[0]), "%d.json", &pid)
	must(w.t, err)
	return pid
}
