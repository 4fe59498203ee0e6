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
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/fakeanthropic"
	"nudge/internal/testenv"
)

// continuation is the retry message the daemon is configured to send.
const continuation = "nudge e2e: the previous attempt failed with a provider error. Please continue where you left off."

// sessionID is the Claude Code session the test starts (--session-id).
const sessionID = "11111111-1111-4111-8111-111111111111"

// TestRealClaudeRecoversAfter500 runs the real Claude Code CLI in a tmux
// pane against a fake Messages API that fails the first main-loop request
// with HTTP 500, and checks that the nudge daemon types its continuation
// into the pane and that the turn then completes.
func TestRealClaudeRecoversAfter500(t *testing.T) {
	claude, err := claudeExe()
	if err != nil {
		testenv.Missing(t, err.Error())
	}
	tmux := testenv.Need(t, "tmux")
	nudge := daemonBinary(t)
	requireLoopbackOnly(t)
	start := time.Now()
	step := func(what string) { t.Logf("%6.2fs  %s", time.Since(start).Seconds(), what) }

	w := newWorld(t)
	srv, err := fakeanthropic.New([]string{"500", "ok"}, w.path("requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	baseURL, stop, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	step("fake Messages API at " + baseURL)

	d := w.startDaemon(nudge)
	d.waitReady()
	step("daemon ready")

	p := w.startClaude(tmux, claude, baseURL)
	reg := p.waitRegistry()
	step(fmt.Sprintf("registry %s", reg))
	p.waitScreen("prompt", func(screen string) bool { return strings.Contains(screen, "\n❯") })
	step("prompt on screen")

	p.typeLine("hello", "❯ hello")
	step("typed hello")
	waitFor(t, "the synthetic 500 record", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		return indexOf(recs, 0, isAPIError(500)) >= 0, summarize(recs)
	})
	step("500 record written")
	if reg := p.registry(); reg["status"] != "idle" {
		t.Logf("registry status after the error is %v, expected idle (formats/claude.md §9.2)", reg["status"])
	}
	waitFor(t, "the continuation and a completed turn", 60*time.Second, func() (bool, string) {
		recs := readRecords(w.transcript())
		missing := recoveredTurn(recs)
		return missing == "", "missing: " + missing + "\n" + summarize(recs)
	})
	step("turn completed after the continuation")
	// A second continuation would come at the latest one retry delay (3s)
	// after the first; give it that long to show up.
	time.Sleep(5 * time.Second)

	recs := readRecords(w.transcript())
	if n := countRecords(recs, isUserText(continuation)); n != 1 {
		t.Errorf("continuation recorded %d times, want once\n%s", n, summarize(recs))
	}
	failed := recs[indexOf(recs, 0, isAPIError(500))]
	sent := recs[indexOf(recs, 0, isUserText(continuation))]
	if gap := sent.Timestamp.Sub(failed.Timestamp); gap < 1900*time.Millisecond {
		t.Errorf("continuation sent %v after the failure, before the configured 2s delay", gap)
	}

	reqs, err := fakeanthropic.ReadLog(w.path("requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var main []fakeanthropic.Request
	for _, r := range reqs {
		if r.Tools > 0 {
			main = append(main, r)
		}
	}
	if len(main) != 2 || main[0].Status != 500 || main[1].Status != 200 ||
		!strings.Contains(main[1].LastUserText, continuation) {
		t.Errorf("main-loop requests: want a 500 then a 200 carrying the continuation, got %+v", main)
	}
	t.Logf("nudge status --json: %s", d.cli("status", "--json"))
	t.Logf("nudge explain --json: %s", d.cli("explain", sessionID, "--json"))
}

// recoveredTurn checks the transcript for: the person's "hello", the
// synthetic 500 record, nudge's continuation typed into the pane, then a
// normal end (assistant end_turn, system turn_duration). It returns what is
// missing, or "".
func recoveredTurn(recs []record) string {
	steps := []struct {
		what  string
		match func(record) bool
	}{
		{"user hello", isUserText("hello")},
		{"500 record", isAPIError(500)},
		{"continuation typed", isUserText(continuation)},
		{"assistant end_turn", func(r record) bool { return r.Type == "assistant" && r.Message.StopReason == "end_turn" }},
		{"turn_duration", func(r record) bool { return r.Type == "system" && r.Subtype == "turn_duration" }},
	}
	at := 0
	for _, s := range steps {
		i := indexOf(recs, at, s.match)
		if i < 0 {
			return s.what
		}
		at = i + 1
	}
	return ""
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
	root    string
	home    string
	project string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir()) // the CLI names projects by the physical cwd (claude.md §10.1)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, root: root, home: filepath.Join(root, "home"), project: filepath.Join(root, "project")}
	for _, dir := range []string{w.project, filepath.Join(w.home, ".claude"), w.path("data"), w.path("tmp")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// First-run state so no onboarding, API-key or trust dialog opens (claude.md §10.2).
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"theme":                  "dark",
		"customApiKeyResponses":  map[string]any{"approved": []string{apiKey}, "rejected": []string{}},
		"projects": map[string]any{w.project: map[string]any{
			"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	w.writeJSON(filepath.Join(w.home, ".claude.json"), state)
	t.Cleanup(func() {
		if t.Failed() {
			w.dumpFile("daemon output", w.path("nudge.out"))
			w.dumpFile("daemon log", w.path("nudge.log"))
			w.dumpFile("fake API requests", w.path("requests.jsonl"))
		}
	})
	return w
}

// apiKey is the dummy API key; short keys are approved whole (claude.md §10.2).
const apiKey = "sk-ant-dummy-key"

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

func (w *world) dumpFile(what, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Logf("%s: %v", what, err)
		return
	}
	if len(b) > 20000 {
		b = b[len(b)-20000:]
	}
	w.t.Logf("%s (%s):\n%s", what, path, b)
}

// transcript is the session file the CLI writes: projects/<dir>/<id>.jsonl,
// found by listing rather than by deriving <dir> (claude.md §2).
func (w *world) transcript() string {
	pattern := filepath.Join(w.home, ".claude", "projects", "*", sessionID+".jsonl")
	if files, _ := filepath.Glob(pattern); len(files) > 0 {
		return files[0]
	}
	return pattern
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

// daemon is a running `nudge run --headless`.
type daemon struct {
	w      *world
	bin    string
	env    []string
	exited chan struct{}
}

func (w *world) startDaemon(bin string) *daemon {
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
	d := &daemon{w: w, bin: bin, exited: make(chan struct{}), env: append(w.baseEnv(),
		"NUDGE_CONFIG="+w.path("nudge.yaml"),
		"NUDGE_DATA_DIR="+w.path("data"),
		"NUDGE_RETRY_DELAYS=2s,3s,4s",
	)}
	out, err := os.Create(w.path("nudge.out"))
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--headless")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = d.env, w.root, out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		w.t.Fatalf("start nudge daemon: %v", err)
	}
	go func() {
		cmd.Wait()
		out.Close()
		close(d.exited)
	}()
	w.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			w.t.Errorf("nudge daemon did not stop within 10s of SIGTERM")
			cmd.Process.Kill()
			<-d.exited
		}
	})
	return d
}

// cli runs a nudge command against the daemon and returns its output.
func (d *daemon) cli(args ...string) string {
	cmd := exec.Command(d.bin, args...)
	cmd.Env, cmd.Dir = d.env, d.w.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(%v)", out, err)
	}
	return string(bytes.TrimSpace(out))
}

// waitReady waits until `nudge status --json` reports the first scan done
// (SPEC §8), so the daemon treats everything after it as new.
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

// pane is the tmux pane the CLI runs in, on a private tmux server.
type pane struct {
	w    *world
	tmux []string
}

func (w *world) startClaude(tmuxPath, claude, baseURL string) *pane {
	w.t.Helper()
	conf := w.path("tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 5000\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	p := &pane{w: w, tmux: []string{tmuxPath, "-S", w.path("tmux.sock"), "-f", conf}}
	env := append(w.baseEnv(),
		"TERM=xterm-256color",
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY="+apiKey,
		// formats/claude.md §10.1: no outside traffic, no CLI retries.
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
	)
	cmd := exec.Command(p.tmux[0], append(p.tmux[1:], "new-session", "-d", "-s", "cc", "-x", "200", "-y", "50",
		"-c", w.project, claude, "--session-id", sessionID)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("start Claude Code in tmux: %v\n%s", err, out)
	}
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("pane at the end:\n%s", p.screen())
			w.t.Logf("transcript at the end:\n%s", summarize(readRecords(w.transcript())))
		}
		exec.Command(p.tmux[0], append(p.tmux[1:], "kill-server")...).Run()
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

// screen returns the visible pane text; the CLI draws the space after its
// input prompt as U+00A0, read here as a plain space.
func (p *pane) screen() string {
	out, err := p.run("capture-pane", "-p", "-t", "cc")
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

// typeLine types text literally (PLATFORM.md §7), waits until the screen
// shows echo, so no keystroke is lost to a TUI still starting, and submits.
func (p *pane) typeLine(text, echo string) {
	p.w.t.Helper()
	if _, err := p.run("send-keys", "-t", "cc", "-l", "--", text); err != nil {
		p.w.t.Fatal(err)
	}
	p.waitScreen(fmt.Sprintf("%q typed", text), func(s string) bool { return strings.Contains(s, echo) })
	if _, err := p.run("send-keys", "-t", "cc", "Enter"); err != nil {
		p.w.t.Fatal(err)
	}
}

// registry returns the CLI's live registry entry for the session
// (~/.claude/sessions/<pid>.json, claude.md §7.1), or nil.
func (p *pane) registry() map[string]any {
	files, _ := filepath.Glob(filepath.Join(p.w.home, ".claude", "sessions", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var reg map[string]any
		if json.Unmarshal(b, &reg) == nil && reg["sessionId"] == sessionID {
			return reg
		}
	}
	return nil
}

// waitRegistry waits for the registry entry naming the tmux pane and
// returns it as JSON.
func (p *pane) waitRegistry() string {
	var last []byte
	waitFor(p.w.t, "the CLI's registry entry with a tmux pane", 30*time.Second, func() (bool, string) {
		reg := p.registry()
		last, _ = json.Marshal(reg)
		pane, _ := reg["tmux"].(string)
		return strings.HasPrefix(pane, "cc:"), string(last)
	})
	return string(last)
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

// record is the part of a transcript line the test looks at (claude.md §3).
type record struct {
	Type              string    `json:"type"`
	Subtype           string    `json:"subtype"`
	Timestamp         time.Time `json:"timestamp"`
	IsSidechain       bool      `json:"isSidechain"`
	IsMeta            bool      `json:"isMeta"`
	IsAPIErrorMessage bool      `json:"isApiErrorMessage"`
	APIErrorStatus    int       `json:"apiErrorStatus"`
	PromptSource      string    `json:"promptSource"`
	Message           struct {
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	} `json:"message"`
}

// text is the record's message text: a typed prompt's string content, or
// the text blocks joined.
func (r record) text() string {
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	json.Unmarshal(r.Message.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// readRecords reads the transcript's conversation records; a missing file
// or a half-written last line reads as fewer records.
func readRecords(path string) []record {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var recs []record
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r record
		if json.Unmarshal(line, &r) != nil || r.IsSidechain {
			continue
		}
		if r.Type == "user" || r.Type == "assistant" || r.Type == "system" {
			recs = append(recs, r)
		}
	}
	return recs
}

func isUserText(text string) func(record) bool {
	return func(r record) bool {
		return r.Type == "user" && !r.IsMeta && r.PromptSource == "typed" && strings.TrimSpace(r.text()) == text
	}
}

func isAPIError(status int) func(record) bool {
	return func(r record) bool {
		return r.Type == "assistant" && r.IsAPIErrorMessage && r.APIErrorStatus == status
	}
}

func indexOf(recs []record, from int, match func(record) bool) int {
	for i := from; i < len(recs); i++ {
		if match(recs[i]) {
			return i
		}
	}
	return -1
}

func countRecords(recs []record, match func(record) bool) int {
	n := 0
	for _, r := range recs {
		if match(r) {
			n++
		}
	}
	return n
}

// summarize renders conversation records one per line for failure messages.
func summarize(recs []record) string {
	var b strings.Builder
	for _, r := range recs {
		text := r.text()
		if len(text) > 100 {
			text = text[:100] + "…"
		}
		fmt.Fprintf(&b, "%s %s %s err=%v/%d stop=%s src=%s %q\n", r.Timestamp.Format("15:04:05.000"), r.Type,
			r.Subtype, r.IsAPIErrorMessage, r.APIErrorStatus, r.Message.StopReason, r.PromptSource, text)
	}
	return b.String()
}
