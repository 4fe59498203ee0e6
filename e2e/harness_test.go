//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/fakeprovider"
	"nudge/internal/testenv"
	"nudge/internal/web"
)

// The harness every real-agent test shares: a private world with its own
// home, the nudge daemon watching it, a fake provider, a tmux pane for a
// TUI, and waits that show the last state when they time out.

// continuation is the retry message the daemon is configured to send.
const continuation = "nudge e2e: the previous attempt failed with a provider error. Please continue where you left off."

// agentCLI is a real agent CLI the tests run: the known-good version
// .ci/install-agents.sh installs into the cache, or the executable an
// environment variable names.
type agentCLI struct {
	name    string // as the person knows it, "Claude Code"
	env     string // names another executable, NUDGE_E2E_<AGENT>
	install string // the install folder in the cache is <install>-<version>
	version string // the known-good version (docs/agents/<agent>.md §1)
	bin     string // the executable inside the install folder
	// kept: an old build tested on purpose (an older record format); make
	// drift tries newer builds under the agent's current CLI instead.
	kept bool
}

// exe finds the CLI's executable.
func (a agentCLI) exe() (string, error) {
	path := os.Getenv(a.env)
	if path == "" {
		path = filepath.Join(cacheDir(), a.install+"-"+a.version, a.bin)
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s %s not installed (run .ci/install-agents.sh or set %s): %w", a.name, a.version, a.env, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s at %s is not an executable file", a.name, path)
	}
	return path, nil
}

// need returns the CLI's executable, or skips the test (fails it under CI).
func (a agentCLI) need(t *testing.T) string {
	t.Helper()
	path, err := a.exe()
	if err != nil {
		testenv.Missing(t, err.Error())
	}
	return path
}

// cacheDir mirrors the default of .ci/install-agents.sh.
func cacheDir() string {
	if d := os.Getenv(envCache); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/nudge-e2e"
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "nudge-e2e")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "nudge-e2e")
}

// requireLoopbackOnly fails a root run that is not inside the loopback-only
// namespace TestMain sets up.
func requireLoopbackOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatalf("list network interfaces: %v", err)
	}
	for _, i := range ifaces {
		if i.Flags&net.FlagLoopback == 0 {
			t.Fatalf("running as root outside a loopback-only network namespace (interface %s)", i.Name)
		}
	}
}

// daemonBinary returns the nudge binary TestMain built, or fails the test.
func daemonBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(envNudgeBin); bin != "" {
		return bin
	}
	if msg := os.Getenv(envNudgeBuildError); msg != "" {
		t.Fatalf("the nudge daemon (./cmd/nudge) does not build:\n%s", msg)
	}
	t.Fatalf("no nudge binary: set %s or let TestMain build ./cmd/nudge", envNudgeBin)
	return ""
}

// world is one test's private machine: a home, a project, nudge's data and
// config, all under a temporary folder.
type world struct {
	t       *testing.T
	nudge   string // the daemon binary
	root    string
	home    string
	project string
	start   time.Time
}

// newWorld makes the world of a test that runs the built daemon inside the
// loopback-only network.
func newWorld(t *testing.T) *world {
	t.Helper()
	nudge := daemonBinary(t)
	requireLoopbackOnly(t)
	root, err := filepath.EvalSymlinks(t.TempDir()) // CLIs name projects by the physical cwd (docs/agents/claude.md §10.1)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, nudge: nudge, root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "project"),
		start: time.Now()}
	for _, dir := range []string{w.project, filepath.Join(w.home, ".claude"), w.path("data"), w.path("tmp")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { stopProcessesIn(t, root) })
	w.dumpOnFailure("daemon log", w.path("nudge.log"))
	w.dumpOnFailure("fake API requests", w.path("requests.jsonl"))
	return w
}

// stopProcessesIn ends every process still working in a folder under root
// (an agent CLI outliving its tmux server keeps writing into its home), so
// the test's folder can be removed: SIGTERM, then SIGKILL after a grace.
func stopProcessesIn(t *testing.T, root string) {
	deadline := time.Now().Add(5 * time.Second)
	for sig := syscall.SIGTERM; ; {
		pids := processesIn(root)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if sig == syscall.SIGKILL {
				t.Logf("processes still in %s: %v", root, pids)
				return
			}
			sig, deadline = syscall.SIGKILL, time.Now().Add(5*time.Second)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesIn lists the processes whose working folder is under root.
func processesIn(root string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && (cwd == root || strings.HasPrefix(cwd, root+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// step logs how far into the test something happened.
func (w *world) step(what string) {
	w.t.Helper()
	w.t.Logf("%6.2fs  %s", time.Since(w.start).Seconds(), what)
}

func (w *world) path(name string) string { return filepath.Join(w.root, name) }

func (w *world) writeJSON(path string, v any) {
	w.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// dumpOnFailure logs the end of the file at path when the test has failed.
func (w *world) dumpOnFailure(what, path string) {
	w.t.Cleanup(func() {
		if !w.t.Failed() {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			w.t.Logf("%s: %v", what, err)
			return
		}
		if len(b) > 20000 {
			b = b[len(b)-20000:]
		}
		w.t.Logf("%s (%s):\n%s", what, path, b)
	})
}

// showOnFailure logs what state returns when the test has failed.
func (w *world) showOnFailure(what string, state func() any) {
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("%s at the end:\n%v", what, state())
		}
	})
}

// baseEnv is a clean environment pointing every per-user folder into the world.
func (w *world) baseEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.home,
		"TMPDIR=" + w.path("tmp"),
		"LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
	}
}

// startProcess starts cmd, its output going to the world file out (shown
// when the test fails), and stops it with SIGTERM when the test ends, with
// SIGKILL after 10 s; slowStop, if set, is called before that kill. The
// returned channel closes when the process has exited.
func (w *world) startProcess(what string, cmd *exec.Cmd, out string, slowStop func()) <-chan struct{} {
	w.t.Helper()
	f, err := os.Create(w.path(out))
	if err != nil {
		w.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		w.t.Fatalf("start %s: %v", what, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		f.Close()
		close(exited)
	}()
	w.dumpOnFailure(what+" output", w.path(out)) // after the stop below
	w.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			if slowStop != nil {
				slowStop()
			}
			cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// serveFake starts a fake provider that plays scenario, its request log in
// the world, and returns it with its base URL; it stops with the test.
func serveFake[S interface {
	Listen(addr string) (string, func(), error)
}](w *world, newServer func(scenario []string, logPath string) (S, error), scenario []string) (S, string) {
	w.t.Helper()
	srv, err := newServer(scenario, w.path("requests.jsonl"))
	if err != nil {
		w.t.Fatal(err)
	}
	baseURL, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(stop)
	w.step("fake provider at " + baseURL)
	return srv, baseURL
}

// daemon is a running `nudge run --headless`.
type daemon struct {
	w      *world
	env    []string
	exited <-chan struct{}
}

// startDaemon starts the daemon on the world, with env added to its
// environment, and waits until it is ready.
func (w *world) startDaemon(env ...string) *daemon {
	w.t.Helper()
	cfg := fmt.Sprintf(`retry:
  enabled: true
  message: %q
  delays: [2s, 3s, 4s]
agents:
  claude: {enabled: true, root: %q}
notify:
  desktop: false
log:
  file: %q
  level: debug
`, continuation, filepath.Join(w.home, ".claude"), w.path("nudge.log"))
	if err := os.WriteFile(w.path("nudge.yaml"), []byte(cfg), 0o600); err != nil {
		w.t.Fatal(err)
	}
	d := &daemon{w: w, env: append(w.baseEnv(),
		"NUDGE_CONFIG="+w.path("nudge.yaml"),
		"NUDGE_DATA_DIR="+w.path("data"),
		"NUDGE_RETRY_DELAYS=2s,3s,4s",
	)}
	d.env = append(d.env, env...)
	cmd := exec.Command(w.nudge, "run", "--headless")
	cmd.Env, cmd.Dir = d.env, w.root
	d.exited = w.startProcess("nudge daemon", cmd, "nudge.out", func() {
		w.t.Errorf("nudge daemon did not stop within 10s of SIGTERM")
	})
	// A CLI call before the daemon made its database would race it.
	w.waitLog("the daemon to open its database", "nudge started")
	d.waitReady()
	w.step("daemon ready")
	return d
}

// waitLog waits until the daemon's log says text.
func (w *world) waitLog(what, text string) {
	w.t.Helper()
	waitFor(w.t, what, 30*time.Second, func() (bool, string) {
		log, _ := os.ReadFile(w.path("nudge.log"))
		return bytes.Contains(log, []byte(text)), string(log)
	})
}

// cli runs a nudge command against the daemon and returns its output.
func (d *daemon) cli(args ...string) string {
	cmd := exec.Command(d.w.nudge, args...)
	cmd.Env, cmd.Dir = d.env, d.w.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(%v)", out, err)
	}
	return string(bytes.TrimSpace(out))
}

// waitReady waits until `nudge status --json` reports the first scan done
// (docs/behaviour.md §8), so the daemon treats everything after it as new.
func (d *daemon) waitReady() {
	waitFor(d.w.t, "nudge status --json to report ready", 30*time.Second, func() (bool, string) {
		select {
		case <-d.exited:
			d.w.t.Fatalf("nudge daemon exited during start-up")
		default:
		}
		out := d.cli("status", "--json")
		var st struct {
			Daemon struct {
				Ready bool `json:"ready"`
			} `json:"daemon"`
		}
		return json.Unmarshal([]byte(out), &st) == nil && st.Daemon.Ready, out
	})
}

// sentOnceThrough checks that `nudge explain` lists one attempt for
// session, sent through backend.
func (d *daemon) sentOnceThrough(t *testing.T, session, backend string) {
	t.Helper()
	var tl struct {
		Attempts []struct{ Status, Backend string }
	}
	out := d.cli("explain", session, "--json")
	if err := json.Unmarshal([]byte(out), &tl); err != nil || len(tl.Attempts) != 1 || tl.Attempts[0].Status != "sent" || tl.Attempts[0].Backend != backend {
		t.Errorf("nudge explain: want one attempt sent through %s, got %s", backend, out)
	}
}

func (d *daemon) inbox() []web.Entry {
	d.w.t.Helper()
	out := d.cli("inbox", "--json")
	var es []web.Entry
	if err := json.Unmarshal([]byte(out), &es); err != nil {
		d.w.t.Fatalf("nudge inbox --json: %v\n%s", err, out)
	}
	return es
}

// sessionStatus is one session of `nudge status --json`.
type sessionStatus struct {
	Agent, Session, State string
	ResetAt               *time.Time `json:"reset_at"`
}

// sessionIn finds an agent's session in the output of `nudge status --json`.
func sessionIn(statusJSON, agent, session string) (sessionStatus, bool) {
	var st struct{ Sessions []sessionStatus }
	if json.Unmarshal([]byte(statusJSON), &st) != nil {
		return sessionStatus{}, false
	}
	for _, s := range st.Sessions {
		if s.Agent == agent && s.Session == session {
			return s, true
		}
	}
	return sessionStatus{}, false
}

// noContinuation waits for d and checks nudge typed nothing: one turn in
// the agent's own record and one main-loop request at the fake.
func noContinuation[T any](t *testing.T, d time.Duration, turns func() []T, main func() []fakeprovider.Request) {
	t.Helper()
	time.Sleep(d)
	if ts := turns(); len(ts) != 1 {
		t.Errorf("turns = %+v, want only the failed one", ts)
	}
	if m := main(); len(m) != 1 {
		t.Errorf("main requests = %+v, want one (the CLI does not retry this answer)", m)
	}
}

// pane is the tmux pane a CLI runs in, session "cc" (or name) on a
// private tmux server.
type pane struct {
	w    *world
	tmux []string
	name string // the tmux session; "" is "cc"
}

// target is the pane's tmux session.
func (p *pane) target() string {
	if p.name == "" {
		return "cc"
	}
	return p.name
}

// beside runs argv with env in the folder dir, in another tmux session,
// name, of p's server: the server's environment is the first pane's, so
// env is set with -e.
func (p *pane) beside(name, dir string, cols, rows int, env []string, argv ...string) *pane {
	p.w.t.Helper()
	q := &pane{w: p.w, tmux: p.tmux, name: name}
	args := []string{"new-session", "-d", "-s", name, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", dir}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	cmd := exec.Command(p.tmux[0], append(p.tmux[1:], append(args, argv...)...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		p.w.t.Fatalf("start %s in tmux session %s: %v\n%s", filepath.Base(argv[0]), name, err, out)
	}
	p.w.t.Cleanup(func() {
		if p.w.t.Failed() {
			p.w.t.Logf("pane %s at the end:\n%s", name, q.screen())
		}
	})
	return q
}

// startIn runs argv with env in via: a 160×45 tmux pane ("tmux"), `nudge
// wrap` in one ("wrap"), or a GNU screen window ("screen"), which is
// returned instead of a pane.
func (w *world) startIn(via, tmux string, env []string, argv ...string) (*pane, *screenSession) {
	w.t.Helper()
	switch via {
	case "tmux":
		return w.startPane(tmux, 160, 45, env, argv...), nil
	case "wrap":
		return w.startPane(tmux, 160, 45, append(env, "NUDGE_DATA_DIR="+w.path("data")), append([]string{w.nudge, "wrap", "--"}, argv...)...), nil
	case "screen":
		return nil, w.startScreen(testenv.Need(w.t, "screen"), env, argv...)
	}
	w.t.Fatalf("no terminal %q", via)
	return nil, nil
}

// startPane runs argv with env in a cols×rows tmux pane in the project
// folder; the pane is shown when the test fails and ends with the test.
func (w *world) startPane(tmux string, cols, rows int, env []string, argv ...string) *pane {
	w.t.Helper()
	conf := w.path("tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 5000\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	p := &pane{w: w, tmux: []string{tmux, "-S", w.path("tmux.sock"), "-f", conf}}
	cmd := exec.Command(tmux, append(p.tmux[1:], append([]string{"new-session", "-d", "-s", "cc",
		"-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", w.project}, argv...)...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("start %s in tmux: %v\n%s", filepath.Base(argv[0]), err, out)
	}
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("pane at the end:\n%s", p.screen())
		}
		p.run("kill-server")
	})
	return p
}

func (p *pane) run(args ...string) (string, error) {
	out, err := exec.Command(p.tmux[0], append(p.tmux[1:], args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// screen returns the visible pane text; Claude Code draws the space after
// its input prompt as U+00A0, read here as a plain space.
func (p *pane) screen() string {
	out, err := p.run("capture-pane", "-p", "-t", p.target())
	if err != nil {
		return err.Error()
	}
	return strings.ReplaceAll(out, "\u00a0", " ")
}

func (p *pane) waitScreen(what string, ok func(string) bool) {
	waitFor(p.w.t, what+" on screen", 30*time.Second, func() (bool, string) {
		s := p.screen()
		return ok(s), s
	})
}

// typeLine types text literally (docs/platform.md §7), waits until the screen
// shows echo, so no keystroke is lost to a TUI still starting (or taken for
// a paste), and submits.
func (p *pane) typeLine(text, echo string) {
	p.w.t.Helper()
	if _, err := p.run("send-keys", "-t", p.target(), "-l", "--", text); err != nil {
		p.w.t.Fatal(err)
	}
	p.waitScreen(fmt.Sprintf("%q typed", text), func(s string) bool { return strings.Contains(s, echo) })
	p.press("Enter")
}

// press sends one key to the pane.
func (p *pane) press(key string) {
	p.w.t.Helper()
	if _, err := p.run("send-keys", "-t", p.target(), key); err != nil {
		p.w.t.Fatal(err)
	}
}

// turnStep is one thing a recovered turn must show, after the steps before it.
type turnStep[T any] struct {
	what  string
	match func(T) bool
}

// firstMissing returns the first of steps not found, in order, in items,
// or "".
func firstMissing[T any](items []T, steps []turnStep[T]) string {
	at := 0
	for _, s := range steps {
		i := indexOf(items, at, s.match)
		if i < 0 {
			return s.what
		}
		at = i + 1
	}
	return ""
}

// indexOf returns the index of the first item from from on that matches,
// or -1.
func indexOf[T any](items []T, from int, match func(T) bool) int {
	for i := from; i < len(items); i++ {
		if match(items[i]) {
			return i
		}
	}
	return -1
}

// count returns how many items match.
func count[T any](items []T, match func(T) bool) int {
	n := 0
	for _, it := range items {
		if match(it) {
			n++
		}
	}
	return n
}

// waitTurns waits up to limit until ok holds of the turns an agent's
// records show (shown when it times out), and logs the step.
func waitTurns[T any](w *world, what string, limit time.Duration, turns func() []T, ok func([]T) bool) {
	w.t.Helper()
	waitFor(w.t, what, limit, func() (bool, string) {
		ts := turns()
		return ok(ts), fmt.Sprintf("%+v", ts)
	})
	w.step(what)
}

// waitFor polls cond until it holds or the deadline passes; cond also
// returns the state to show on failure.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; last state:\n%s", limit, what, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
