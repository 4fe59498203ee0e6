//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"nudge/e2e/fakeresponses"
	"nudge/internal/testenv"
)

// The real Codex CLI (TUI in tmux) against e2e/fakeresponses, with the nudge
// daemon watching its rollouts (docs/agents/codex.md §9).

// codexCLI is the known-good Codex CLI launcher (docs/agents/codex.md §1).
var codexCLI = agentCLI{name: "Codex CLI", env: "NUDGE_E2E_CODEX", install: "codex", version: "0.171.0",
	bin: filepath.Join("node_modules", ".bin", "codex")}

// TestRealCodexRecoversAfter500: a turn killed by a 5xx is continued by
// nudge, typed into the Codex pane once the screen shows the idle composer,
// and the continued turn completes.
func TestRealCodexRecoversAfter500(t *testing.T) {
	c := startCodex(t, "500")
	c.send("hello")
	c.waitTurnEnd(1, "internal_server_error")
	waitFor(t, "the continuation's turn to complete", 60*time.Second, func() (bool, string) {
		turns := c.turns()
		return len(turns) >= 2 && turns[1].ended && turns[1].errInfo == "", fmt.Sprintf("%+v", turns)
	})
	time.Sleep(5 * time.Second) // no second continuation may follow
	turns := c.turns()
	if len(turns) != 2 || turns[1].user != continuation || turns[1].trigger != "user" {
		t.Errorf("turns = %+v, want the failed one and one continuation typed into the TUI", turns)
	}
	main := c.srv.Main()
	if len(main) != 2 || main[0].Mode != "500" || main[1].Mode != fakeresponses.ModeOK || main[1].LastUserText != continuation {
		t.Errorf("main requests = %+v, want a 500 then a success carrying the continuation", main)
	}
	t.Logf("nudge status --json: %s", c.d.cli("status", "--json"))
}

// TestRealCodexUsageLimitNotRetried: a usage limit is never retried, and
// `nudge status --json` shows Codex's reset time.
func TestRealCodexUsageLimitNotRetried(t *testing.T) {
	c := startCodex(t, fakeresponses.ModeUsageLimit)
	c.send("hello")
	c.waitTurnEnd(1, "usage_limit_exceeded")
	var got *time.Time
	waitFor(t, "the reset time in nudge status", 20*time.Second, func() (bool, string) {
		out := c.d.cli("status", "--json")
		s, ok := sessionIn(out, "codex", c.session())
		got = s.ResetAt
		return ok && s.ResetAt != nil, out
	})
	if want := c.srv.ResetAt(); !got.Equal(want) {
		t.Errorf("status reset_at = %v, want %v (the fake's x-codex-primary-reset-at)", got, want)
	}
	noContinuation(t, 6*time.Second, c.turns, c.srv.Main)
	es := c.d.inbox()
	if len(es) != 1 || es[0].Class != "usage_limit" {
		t.Errorf("inbox = %+v, want one usage-limit entry", es)
	}
}

// TestRealCodexAuthIsOneEntry: an auth failure is one Inbox entry that says
// how to sign in, and is never retried.
func TestRealCodexAuthIsOneEntry(t *testing.T) {
	c := startCodex(t, "401")
	c.send("hello")
	c.waitTurnEnd(1, "http_connection_failed")
	waitFor(t, "the Inbox entry", 20*time.Second, func() (bool, string) {
		es := c.d.inbox()
		return len(es) > 0, fmt.Sprintf("%+v", es)
	})
	noContinuation(t, 6*time.Second, c.turns, c.srv.Main)
	es := c.d.inbox()
	if len(es) != 1 || es[0].Class != "auth" || !strings.Contains(es[0].What, "codex login") {
		t.Errorf("inbox = %+v, want one auth entry naming `codex login`", es)
	}
}

// codexRun is one Codex TUI session in tmux, the fake provider and the daemon.
type codexRun struct {
	t    *testing.T
	w    *world
	srv  *fakeresponses.Server
	d    *daemon
	p    *pane
	home string // CODEX_HOME
}

func startCodex(t *testing.T, scenario ...string) *codexRun {
	return startCodexCLI(t, codexCLI, "› Ask Codex to do anything", scenario...)
}

// startCodexCLI runs cli's TUI in tmux against the fake playing scenario,
// with the daemon watching, and waits until the screen shows ready.
func startCodexCLI(t *testing.T, cli agentCLI, ready string, scenario ...string) *codexRun {
	codex := cli.need(t)
	tmux := testenv.Need(t, "tmux")
	w := newWorld(t)
	c := &codexRun{t: t, w: w, home: filepath.Join(w.home, ".codex")}
	srv, baseURL := serveFake(w, fakeresponses.New, scenario)
	c.srv = srv
	c.writeConfig(baseURL)

	// The daemon finds ~/.codex through HOME (agents.codex.root is "").
	c.d = w.startDaemon()

	env := append(w.baseEnv(), "TERM=xterm-256color", "CODEX_HOME="+c.home, "OPENAI_API_KEY=dummy")
	t.Cleanup(func() { c.stopAppServer(codex, env) }) // after the pane is gone
	w.showOnFailure("rollout turns", func() any { return fmt.Sprintf("%+v", c.turns()) })
	c.p = w.startPane(tmux, 200, 50, env, codex)
	c.p.waitScreen("the idle composer", func(s string) bool { return strings.Contains(s, ready) })
	return c
}

// writeConfig points Codex at the fake with its own retries off, and past
// its first-run screens (docs/agents/codex.md §9.1).
func (c *codexRun) writeConfig(baseURL string) {
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		c.t.Fatal(err)
	}
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 15000

[analytics]
enabled = false

[projects.%q]
trust_level = "trusted"

[tui]
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 1

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
`, baseURL, c.w.project)
	if err := os.WriteFile(filepath.Join(c.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// stopAppServer stops the managed app-server daemon the TUI started: it
// outlives the pane (docs/agents/codex.md §2).
func (c *codexRun) stopAppServer(codex string, env []string) {
	cmd := exec.Command(codex, "app-server", "daemon", "stop")
	cmd.Env, cmd.Dir = env, c.w.project
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Logf("codex app-server daemon stop: %v\n%s", err, out)
	}
	// Anything still running from this test's CODEX_HOME is ended by pid.
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range procs {
		target, err := os.Readlink(exe)
		if err != nil || !strings.HasPrefix(target, c.home+string(filepath.Separator)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(exe)), "%d", &pid); err == nil {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}

// send types a prompt into the composer; Enter follows once the text shows,
// or Codex takes the burst for a paste and keeps the Enter as a newline.
func (c *codexRun) send(text string) {
	c.p.typeLine(text, "› "+text)
}

// rollout is the session's rollout file, once Codex created it.
func (c *codexRun) rollout() string {
	files, _ := filepath.Glob(filepath.Join(c.home, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(files) == 1 {
		return files[0]
	}
	return ""
}

// codexTurn is one turn as the rollout tells it.
type codexTurn struct {
	user    string // the person's (or nudge's) message
	trigger string // turn_attribution.turn_trigger: "user" for the TUI, "exec" headless
	ended   bool
	errInfo string // codex_error_info's name; "" for a clean end
}

// turns reads the rollout's turns (docs/agents/codex.md §3.1).
func (c *codexRun) turns() []codexTurn {
	data, err := os.ReadFile(c.rollout())
	if err != nil {
		return nil
	}
	var turns []codexTurn
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r struct {
			Type    string `json:"type"`
			Payload struct {
				Type        string `json:"type"`
				Attribution struct {
					Trigger string `json:"turn_trigger"`
				} `json:"turn_attribution"`
				Item struct {
					Type    string `json:"type"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"item"`
				Error *struct {
					Info json.RawMessage `json:"codex_error_info"`
				} `json:"error"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Type != "event_msg" {
			continue
		}
		last := len(turns) - 1
		switch r.Payload.Type {
		case "task_started":
			turns = append(turns, codexTurn{trigger: r.Payload.Attribution.Trigger})
		case "item_completed":
			if r.Payload.Item.Type == "UserMessage" && last >= 0 && len(r.Payload.Item.Content) > 0 {
				turns[last].user = r.Payload.Item.Content[0].Text
			}
		case "task_complete", "turn_aborted":
			if last < 0 {
				continue
			}
			turns[last].ended = true
			if e := r.Payload.Error; e != nil {
				turns[last].errInfo = errorName(e.Info)
			}
		}
	}
	return turns
}

// errorName is codex_error_info's name: the string, or the one key.
func errorName(info json.RawMessage) string {
	var s string
	if json.Unmarshal(info, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	json.Unmarshal(info, &obj)
	for k := range obj {
		return k
	}
	return string(info)
}

// waitTurnEnd waits until turn n (1-based) ended with errInfo.
func (c *codexRun) waitTurnEnd(n int, errInfo string) {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("turn %d to end with %s", n, errInfo), 60*time.Second, func() (bool, string) {
		turns := c.turns()
		return len(turns) >= n && turns[n-1].ended, fmt.Sprintf("%+v", turns)
	})
	if got := c.turns()[n-1].errInfo; got != errInfo {
		c.t.Fatalf("turn %d ended with %q, want %q", n, got, errInfo)
	}
}

// session is the rollout's session id (the uuid in its name).
func (c *codexRun) session() string {
	name := strings.TrimSuffix(filepath.Base(c.rollout()), ".jsonl")
	if len(name) < 36 {
		return ""
	}
	return name[len(name)-36:]
}
